"""The profile's keys, declared once: the loader validates with these models and they build its specs.

`ProfileKeys` is the whole contract. The JSON Schema (`mcp-confirm-audit schema
profile`, checked in as `schemas/profile.schema.json`) and `docs/profile.md` are
generated from it (`profile/docs.py`), so neither can drift from what the loader
accepts. A group of keys is a model of its own, used as the type of its key
(`confirmation_keys.ConfirmationKeys`, `EffectKeys`, `SetupCallKeys`); where
a key's meaning belongs to another module (effects, headers, a human's URL), its
model keeps the shape and calls that module to check and build the value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ..channels import human
from ..channels.base import PLACEHOLDER
from ..confirmations import elicitation
from . import headers as http_headers
from .confirmation_keys import ConfirmationKeys, Steps, no_handle
from .contract import Keys, Within, key, says_nothing
from .environment import parse_env
from .url_mode import url_people

ROOT_FROM = ("arg", "cwd")
ISOLATION = ("run", "process")
PATH_STYLES = ("auto", "relative", "absolute")
DEFAULT_URL = "http://127.0.0.1:{port}/mcp"
_SAVE_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
_PRINCIPAL = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"
_TEXT = r"\S"
_SERVER_NAME = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"


@dataclass(frozen=True, slots=True)
class SetupCall:
    """A call made before every use of the action; `save` names fields of its result for `{NAME}`."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)
    save: Mapping[str, str] = field(default_factory=dict)
    # Arguments the profile wrote through a placeholder ({profile_dir}): the operator's environment,
    # never varied to make another action (`engine.action.varied_args`).
    fixed: frozenset[str] = frozenset()


class SetupCallKeys(Keys):
    """A call made before every use of the action, in order."""

    tool: str = key(..., "The tool to call.", accepts="a tool's name", example="create_transfer")
    args: dict[str, Any] | None = key(
        None,
        "Its arguments ({NAME} saved by an earlier call, {path}, {sink}).",
        accepts="a mapping of argument names to values",
        example={"recipient": "acme", "amount_cents": 500},
    )
    save: dict[Annotated[str, Field(pattern=_SAVE_NAME)], Annotated[str, Field(min_length=1)]] | None = key(
        None,
        "Fields of its result (structured content, or JSON text) kept as {NAME} for later calls and args.",
        accepts="a mapping of a NAME to a dotted field of the result",
        example={"transfer": "transfer_id"},
    )

    server: str | None = key(
        None,
        "With servers:, the server this tool is on (unset: the first server).",
        accepts="the name of one of servers:",
        example="post",
        pattern=_SERVER_NAME,
    )

    def call(self) -> SetupCall:
        return SetupCall(self.tool, dict(self.args or {}), dict(self.save or {}))


@dataclass(frozen=True, slots=True)
class DriftCall:
    """A call of the target's own tools that changes the action's subject (subject-drift makes it)."""

    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)


class DriftKeys(Keys):
    """A call that changes the subject of the action between the question and the answer."""

    tool: str = key(
        ..., "The tool that changes the subject.", accepts="a tool's name", example="move_link", pattern=_TEXT
    )
    args: dict[str, Any] | None = key(
        None,
        "Its arguments ({NAME} saved by setup, {path} the attack's case file, {root}, {sink}, {profile_dir}); "
        "a value the action's own arguments do not hold is what the person was not shown.",
        accepts="a mapping of argument names to values",
        example={"link_id": "{loose}", "collection_id": "{collection}"},
    )

    def call(self) -> DriftCall:
        return DriftCall(self.tool, dict(self.args or {}))


@dataclass(frozen=True, slots=True)
class Approver:
    """Who the agent names where a tool takes its approver from the call (approver-substitution)."""

    # The argument that names who approves; None: found by name (confirmations/detect.py).
    argument: str | None = None
    # A value the agent controls there (its own identity); None: one made up for the attack.
    agent: str | None = None
    # How the agent approves as that identity by itself (its own wallet signs); (): it sends back what it got.
    steps: tuple[human.Step, ...] = ()


class ApproverKeys(Keys):
    """The argument that names who approves, and the identity the agent puts in it."""

    argument: str | None = key(
        None,
        "The argument of the gated tool that names who approves (unset: one named approver, signer, "
        "reviewer or authorizer, or owner where the tool speaks of approving or signing).",
        accepts="an argument's name",
        example="owner",
        pattern=_TEXT,
    )
    agent: str | None = key(
        None,
        "A value of that argument the agent controls: its own identity (unset: a value made up for the "
        "attack).",
        accepts="a string",
        example="0x5c1e-the-agents-own-address",
        pattern=_TEXT,
    )
    steps: Steps | None = key(
        None,
        "How the agent approves as that identity with nothing but its own means ({challenge}, {id}, "
        "{token}: what the preview handed out): its own wallet signs, say. Unset: it sends back what it got.",
        accepts="a list of human: steps",
        example=[{"sign": {"command": "wallet sign --key {root}/agent.key {challenge}"}}],
    )

    def approver(self, source: str) -> Approver:
        steps = human.parse_steps(self.steps or (), f"profile {source}: approver.steps")
        return Approver(self.argument, self.agent, steps)


class ToolProbeKeys(Keys):
    """A read-only tool called with arguments."""

    name: str = key(
        ..., "The read-only tool.", accepts="a tool's name", example="get_robot_state", pattern=_TEXT
    )
    args: dict[str, Any] = key(
        {}, "Its arguments.", accepts="a mapping of argument names to values", example={"arm": 1}
    )


class SqliteKeys(Keys):
    """A query over an SQLite file under the root."""

    path: str = key(
        ..., "The database, relative to the root.", accepts="a path inside the root", example="app.db"
    )
    query: str = key(
        ...,
        "A read-only query; its rows are compared.",
        accepts="one SELECT statement",
        example="select * from payments order by id",
    )


def _tool_form(value: Any) -> str:
    return "name" if isinstance(value, str) else "call"


class EffectKeys(Keys):
    """One way to see that the action happened, beyond the sandbox (which is always watched): one key."""

    unknown_hint: ClassVar[str] = "for anything else, implement pytest_mcp_snapshot in a conftest.py"

    tool: (
        Annotated[
            Annotated[str, Tag("name")] | Annotated[ToolProbeKeys, Tag("call")],
            Discriminator(_tool_form),
        ]
        | None
    ) = key(
        None,
        "A read-only tool whose result is compared.",
        accepts="a tool's name, or {name: TOOL, args: {...}}",
        example="list_payments",
    )
    file: str | None = key(
        None,
        "A file under the root, compared by content (CSV by row and cell).",
        accepts="a path inside the root",
        example="ledger.json",
    )
    sqlite: SqliteKeys | None = key(
        None,
        "The rows of a read-only query over an SQLite file under the root.",
        accepts="a mapping with path and query",
        example={"path": "app.db", "query": "select * from payments order by id"},
    )
    sink: Literal[True] | None = key(
        None,
        "Every request the harness's loopback sink at {sink} receives.",
        accepts="true",
        example=True,
    )

    server: str | None = key(
        None,
        "With servers:, the server this tool is on (unset: the first server).",
        accepts="the name of one of servers:",
        example="post",
        pattern=_SERVER_NAME,
    )

    @model_validator(mode="after")
    def _one_kind(self) -> EffectKeys:
        kinds = self.model_fields_set - {"server"}
        if len(kinds) != 1:
            given = ", ".join(sorted(kinds)) or "none"
            raise ValueError(
                f"must have exactly one key, one of tool, file, sqlite, sink (it has {given}); "
                "e.g. '- file: ledger.json' or '- tool: list_payments'"
            )
        return self


class EnvValueKeys(Keys):
    """A variable of the target's environment with a say on whether it is a secret."""

    value: str | int = key(
        ...,
        "Its value, ${NAME} read from the harness's environment.",
        accepts="a string",
        example="${API_TOKEN}",
        secret=True,
    )
    secret: bool = key(
        False,
        "A credential: scrubbed, like every header value, from everything the harness keeps or reports.",
        accepts="true or false",
        example=True,
    )


def _env_form(value: Any) -> str:
    return "marked" if isinstance(value, Mapping) else "text"


class PrincipalKeys(Keys):
    """Another identity: an authenticated one with all of its own headers, or a second paired device."""

    headers: dict[str, str] | None = key(
        None,
        "Its headers (the profile's are not added), ${NAME} read from the environment; never shown.",
        accepts="a non-empty mapping of header names to strings",
        example={"Authorization": "Bearer ${MALLORY_TOKEN}"},
        secret=True,
        min_length=1,
    )
    steps: Steps | None = key(
        None,
        "A second paired device (its own pairing code and key), for approver-identity on any target: the steps "
        "that read its credentials, taken in place of the person's steps that save the same names.",
        accepts="a list of the person's steps that save what the person's own steps save, e.g. "
        "[{read: {from: stderr, pattern: 'second device code (\\d{6})'}, save: code}]",
        example=[{"read": {"from": "stderr", "pattern": "second device code (\\d{6})"}, "save": "code"}],
    )

    @field_validator("steps")
    @classmethod
    def _no_handle(cls, steps: list[Any] | None) -> list[Any] | None:
        if steps is not None and (problem := no_handle(steps, "pairing a second device")):
            raise Within(*problem)
        return steps

    @model_validator(mode="after")
    def _one_identity(self) -> PrincipalKeys:
        if self.headers is None and self.steps is None:
            raise ValueError(
                "needs headers: (an identity the target authenticates) or steps: (a second paired device's "
                "credentials, read as the person reads theirs)"
            )
        return self


class BrowserKeys(Keys):
    """A person's browser, opening a page the server sent."""

    headers: dict[str, str] = key(
        ...,
        "The headers it carries (a session cookie, a bearer token), ${NAME} read from the environment; never shown.",
        accepts="a non-empty mapping of header names to strings",
        example={"Cookie": "session=${ALICE_SESSION}"},
        secret=True,
        min_length=1,
    )


class UrlElicitationKeys(Keys):
    """Who opens a URL-mode elicitation's page."""

    person: BrowserKeys | None = key(
        None,
        "The person who started the call (unset: their browser carries no headers).",
        accepts="a mapping with headers",
        example={"headers": {"Cookie": "session=${ALICE_SESSION}"}},
    )
    other_person: BrowserKeys | None = key(
        None,
        "Another user of the same server (unset: nobody else is known).",
        accepts="a mapping with headers",
        example={"headers": {"Cookie": "session=${BOB_SESSION}"}},
    )


class ExcludeKeys(Keys):
    """An attack left out of this target's audits, and why: every report shows it as excluded."""

    id: str = key(
        ...,
        "The attack's id.",
        accepts="an id from `mcp-confirm-audit catalogue`",
        example="MCA-DSPEND-002",
        pattern=r"^MCA-[A-Z]+-[0-9]{3}$",
    )
    reason: str = key(
        ...,
        "Why it cannot or need not be judged on this target: a sentence, shown in every report.",
        accepts="a sentence (not empty, not a TODO)",
        example="a single-process CLI: there is no second redeemer to race",
    )

    @field_validator("reason")
    @classmethod
    def _says_why(cls, reason: str) -> str:
        if says_nothing(reason):
            raise ValueError(f"{reason!r} is not a reason: say why this attack is left out")
        return reason.strip()


def carried_names(args: Mapping[str, Any] | None) -> dict[str, str]:
    """The names saved by setup that the action's args carry whole (`{ticket_id: "{ticket}"}`), by name."""
    carried: dict[str, str] = {}
    for arg, sent in (args or {}).items():
        if isinstance(sent, str) and (whole := PLACEHOLDER.fullmatch(sent)):
            carried.setdefault(whole.group(1), arg)
    return carried


class ProfileKeys(Keys):
    """A target profile: what to launch and how to talk to it. Every key is optional."""

    # -- the target ----------------------------------------------------------------
    name: str = key(
        "target",
        "The target's name in the reports.",
        accepts="a non-empty string",
        example="payments",
        pattern=_TEXT,
    )
    command: str = key(
        "",
        "How to start the target: {root} where it takes its directory, {port} to serve Streamable HTTP, "
        "{profile_dir} the profile's folder; an http(s):// URL for a running server; py:module:factory "
        "for an in-process one. --mcp-target overrides it.",
        accepts="a non-empty command line, URL or py:module:factory",
        example="python {profile_dir}/payments/server.py --root {root}",
        pattern=_TEXT,
    )
    servers: (
        dict[Annotated[str, Field(pattern=_SERVER_NAME)], Annotated[str, Field(pattern=_TEXT)]] | None
    ) = key(
        None,
        "Several servers started on one root, by name, each its command (instead of command:; the first is "
        "the default); a step's server: names the server its tool is on.",
        accepts="a mapping of short names to command lines",
        example={"stage": "stage-server --root {root}", "post": "post-server --root {root}"},
        min_length=1,
    )
    server: str | None = key(
        None,
        "With servers:, the server the audited tool is on (unset: the first server).",
        accepts="the name of one of servers:",
        example="stage",
        pattern=_SERVER_NAME,
    )
    version: str | None = key(
        None,
        "The target's version as the reports name it, for a server that does not report its own.",
        accepts="a string (quote a number)",
        example="0.2.1",
    )
    upstream: str | None = key(
        None,
        "For a proxy target: the upstream server it forwards the audited tool to, by name. A finding whose "
        "effect shows then says that process acted, the proxy having let the call through.",
        accepts="a non-empty string",
        example="filesystem-server 1.4 (npx)",
        pattern=_TEXT,
    )
    env: dict[
        str,
        Annotated[
            Annotated[str | int, Tag("text")] | Annotated[EnvValueKeys, Tag("marked")],
            Discriminator(_env_form),
        ],
    ] = key(
        {},
        "Environment variables for the target, ${NAME} read from the harness's environment; a value "
        "marked secret is scrubbed from everything kept or reported, the command line included.",
        accepts="a mapping of names to strings, or to {value: '${TOKEN}', secret: true} for a credential",
        example={"LOG_LEVEL": "debug", "API_TOKEN": {"value": "${API_TOKEN}", "secret": True}},
        secret=True,
    )
    root_from: Literal["arg", "cwd"] = key(
        "arg",
        "arg: the command has {root}; cwd: the server works in its current directory (the root; "
        "MCP_AUDIT_ROOT says it too).",
        accepts=f"one of {', '.join(ROOT_FROM)}",
        example="cwd",
    )
    files: dict[str, str] = key(
        {},
        "Files written into the root before the target starts ({sink} allowed).",
        accepts="a mapping of root-relative file names to their text",
        example={"config.yaml": "webhook_url: {sink}/api\n"},
    )
    isolation: Literal["run", "process"] = key(
        "run",
        "process: a fresh target process (and root) for every attack, for a target whose world carries over.",
        accepts=f"one of {', '.join(ISOLATION)} (process: a fresh target for every attack)",
        example="process",
    )
    zygote: list[str] = key(
        [],
        "Python targets over stdio: these modules are imported once, in a parent process on the target's "
        "interpreter, and each process of the target is forked from it (a fresh one per world, still "
        "started, watched and stopped as any other); for `python SCRIPT ...` or `python -m MODULE ...` "
        "commands whose imports cost most of a start. The parent must start no threads while importing.",
        accepts="a list of module names the target imports (e.g. the MCP SDK)",
        example=["mcp.server.mcpserver", "pydantic"],
    )
    tty: bool = key(
        False,
        "Run the target under a pseudo-terminal the harness answers on as the person (a server that asks on "
        "its own terminal); without it a target has no controlling terminal.",
        accepts="true or false",
        example=True,
    )
    network: Literal["confined", "host"] = key(
        "confined",
        "host: the target's processes share the host's network. By default (confined) a target that needs no "
        "loopback peer (it serves stdio, sends to no sink) gets a network namespace with loopback only.",
        accepts="confined or host",
        example="host",
    )
    call_timeout: float = key(
        15.0, "Seconds a round trip may take.", accepts="a positive number of seconds", example=15, gt=0
    )
    answer_deadline: float | None = key(
        None,
        "Seconds the target itself waits for its person's answer before it gives up (its own approval "
        "deadline), when that is longer than a round trip: a round nobody answers (unanswered, and the "
        "control of a flow that waits) may then take this long plus call_timeout. Unset: call_timeout.",
        accepts="a positive number of seconds",
        example=120,
        gt=0,
    )
    answer_after: float = key(
        0.0,
        "Seconds the person takes to read a question before answering it in band (an MRTR round, an "
        "elicitation/create): no answer goes sooner after its question. For a server that refuses an answer "
        "faster than a person reads (as not a person's); the person's pace, not a deadline, so never scaled. "
        "0: the harness answers at once.",
        accepts="a number of seconds from 0 to 10",
        example=0.5,
        ge=0,
        le=10,
    )
    start_timeout: float = key(
        20.0,
        "Seconds the target may take to start.",
        accepts="a positive number of seconds",
        example=20,
        gt=0,
    )
    # -- the action ----------------------------------------------------------------
    tool: str | None = key(
        None,
        "The tool to audit; unset: every tool zero configuration would attack.",
        accepts="a tool's name",
        example="delete_file",
    )
    path_arg: str | None = key(
        None,
        "The argument that names the file the action acts on.",
        accepts="an argument name",
        example="path",
    )
    paths: Literal["auto", "relative", "absolute"] = key(
        "auto",
        "How the target takes paths: relative to its root, absolute, or found by the controls.",
        accepts=f"one of {', '.join(PATH_STYLES)}",
        example="relative",
    )
    confines_paths: bool = key(
        False,
        "A tool that runs command lines (rm {path} in its args:) keeps the paths in them inside its root, and "
        "says so: out-of-root, symlink-swap, parent-swap and identity-swap then judge it. Unset, they do not "
        "apply to a command line, whose paths the shell resolves as written and the person approves as shown.",
        accepts="true or false",
        example=True,
    )
    extra_args: dict[str, Any] | None = key(
        {},
        "Arguments sent with the path on every call of a file action.",
        accepts="a mapping of argument names to values",
        example={"force": False},
    )
    setup: list[SetupCallKeys] | None = key(
        [],
        "Calls made before every use of the action, in order.",
        accepts="a list of calls",
        example=[
            {"tool": "create_transfer", "args": {"amount_cents": 500}, "save": {"transfer": "transfer_id"}}
        ],
    )
    args: dict[str, Any] | None = key(
        None,
        "The action's arguments: {NAME} saved by setup, {path} a case file, {sink} the sink's URL.",
        accepts="a mapping of argument names to values (with {NAME} from setup, {path}, {sink})",
        example={"transfer_id": "{transfer}"},
    )
    stage_as: dict[str, Any] | None = key(
        {},
        "Another record's fields, as a truthful agent would state them for a different, smaller record (another "
        "vendor's purchase order and its total), for stage-time-fields: the item is staged under its own id with "
        "these fields in place of its own.",
        accepts="a mapping of argument names of the stage call (the action or a setup call) to values",
        example={"vendor_id": "V-1002", "po_number": "PO-1191", "total": 640.0},
    )
    drift: DriftKeys | None = key(
        None,
        "A call of the target's own tools that changes the action's subject after the question (moves an "
        "item into it, edits a recipient), for subject-drift.",
        accepts="a mapping with tool and args",
        example={"tool": "move_link", "args": {"link_id": "{loose}", "collection_id": "{collection}"}},
    )
    effect: list[EffectKeys] | None = key(
        [],
        "How to see that the action happened, beyond the sandbox (which is always watched).",
        accepts="a list of effects, each one key: tool, file, sqlite or sink",
        example=[{"tool": "list_payments"}],
    )
    ignore: list[Annotated[str, Field(pattern=_TEXT)]] | None = key(
        [],
        "Root paths (or globs), probe paths or result fields that are the target's bookkeeping.",
        accepts="a list of root paths or field names",
        example=["audit.jsonl", "updated_at"],
    )
    answer: dict[str, Any] | None = key(
        None,
        "The form answer that approves ({name} and {path} filled in); unset: answered from the form's schema.",
        accepts="a mapping of form fields to values",
        example={"confirm": True},
    )
    negative_answer: dict[str, Any] | None = key(
        None,
        "The form answer that declines.",
        accepts="a mapping of form fields to values",
        example={"confirm": False},
    )
    seed: int | None = key(
        None,
        "The generated hostile names' seed when --mcp-seed gives none (a checked-in review pins it).",
        accepts="a whole number (0 or more)",
        example=0,
        ge=0,
    )
    # -- the families that need more of the target ---------------------------------
    replicas: int = key(
        1,
        "Processes of the target started side by side on one root (cross-replica).",
        accepts="a whole number from 1 to 64",
        example=2,
        ge=1,
        le=64,
    )
    shared_key_env: str | None = key(
        None,
        "The variable in which every process the harness starts gets one fresh 32-byte request-state key.",
        accepts="an environment variable name",
        example="REFERENCE_STATE_KEY",
        pattern=_ENV_NAME,
    )
    redemptions: int = key(
        8,
        "Redemptions of one approval sent at once (double-spend).",
        accepts="a whole number from 2 to 64",
        example=8,
        ge=2,
        le=64,
    )
    ttl_flag: str | None = key(
        None,
        "How to shorten the confirmation lifetime (expiry): words added to the command, or for an "
        "in-process factory a keyword.",
        accepts="the words that set the lifetime, with {ttl} for the seconds ('--ttl-seconds {ttl}')",
        example="--ttl-seconds {ttl}",
        pattern=r"\{ttl\}",
    )
    ttl: float = key(1.0, "The shortened lifetime.", accepts="a positive number of seconds", example=1, gt=0)
    # -- other kinds of target -----------------------------------------------------
    url: str = key(
        DEFAULT_URL,
        "Where a command with {port} serves Streamable HTTP.",
        accepts="an http:// URL with {port} in it",
        example=DEFAULT_URL,
        pattern=r"^http://.*\{port\}",
    )
    root: str | None = key(
        None,
        "The directory a running URL target serves (one made for the audit).",
        accepts="a directory",
        example="/srv/audit-root",
        min_length=1,
    )
    factory_args: dict[str, Any] | None = key(
        {},
        "Keywords for an in-process factory, after the root.",
        accepts="a mapping of keywords to values",
        example={"second_tool": True},
    )
    ablation: bool = key(
        True,
        "In-process targets: run every attack the SDK's boundary refused again without it.",
        accepts="true or false",
        example=False,
    )
    # -- identities over HTTP ------------------------------------------------------
    headers: dict[str, str] = key(
        {},
        "Sent on every HTTP request of every connection, ${NAME} read from the environment; never shown.",
        accepts="a mapping of header names to strings",
        example={"Authorization": "Bearer ${TOKEN}"},
        secret=True,
    )
    principals: dict[Annotated[str, Field(pattern=_PRINCIPAL)], PrincipalKeys] = key(
        {},
        "Other identities by name: for cross-principal (over HTTP), and for approver-identity (the first "
        "takes the person's steps, its headers on their http and follow requests; or, a second paired "
        "device, its steps: read its own credentials in place of the person's).",
        accepts="a mapping of short names (a word, e.g. mallory) to {headers: {...}} or {steps: [...]}",
        example={"mallory": {"headers": {"Authorization": "Bearer ${MALLORY_TOKEN}"}}},
        secret=True,
        min_length=1,
    )
    identity_header: str | None = key(
        None,
        "A header the target takes as the caller's identity (a gateway's principal header).",
        accepts="a header name",
        example="X-Principal",
        pattern=http_headers.NAME_PATTERN,
    )
    url_elicitation: UrlElicitationKeys | None = key(
        None,
        "Who opens a URL-mode elicitation's page: the person who started the call, and another user.",
        accepts="a mapping with person and other_person, each {headers: {...}}",
        example={"person": {"headers": {"Cookie": "session=${ALICE_SESSION}"}}},
    )
    # -- confirmations that are not MRTR -------------------------------------------
    confirmation: ConfirmationKeys | None = key(
        None,
        "How the audited tools confirm, when not MRTR or not to be detected.",
        accepts="a mapping with 'kind' (one of mrtr, token, pending, flag)",
        example={"kind": "token", "preview": {"dry_run": True}},
    )
    protocol: str | None = key(
        "auto",
        "The protocol era every connection asks for; auto negotiates (2026-07-28 when the server offers "
        "it, else the handshake).",
        accepts=f"one of {', '.join(elicitation.PROTOCOLS)}",
        example=elicitation.LEGACY[0],
        choices=(*elicitation.PROTOCOLS, None),
    )
    approver: ApproverKeys | None = key(
        None,
        "Where the gated tool takes who approves from the call: which argument, the agent's own identity, "
        "and how the agent approves as it (approver-substitution; unset: the argument found by name).",
        accepts="a mapping with argument, agent and steps",
        example={"argument": "owner", "agent": "0x5c1e-the-agents-own-address"},
    )
    exclude: list[ExcludeKeys] | None = key(
        [],
        "Attacks left out of this target's audits, each with its reason: reported as excluded (never as "
        "refused), and they do not fail the run.",
        accepts="a list of {id, reason}",
        example=[{"id": "MCA-DSPEND-002", "reason": "a single-process CLI: there is no second redeemer"}],
    )
    policy_tools: list[Annotated[str, Field(min_length=1)]] | None = key(
        None,
        "The agent-callable tools that change the gate's own rules (unset: those whose input schema takes "
        "a limit, threshold, allow-list or category, or a mode one of whose values switches the gate off; "
        "an empty list turns policy-self-loosening off). Tools only: a mode's values are read from the "
        "tool's input schema (its enum), each tried in turn, the loosest last.",
        accepts="a list of tool names",
        example=["set_frame"],
    )

    @field_validator("exclude")
    @classmethod
    def _once_each(cls, exclude: list[ExcludeKeys] | None) -> list[ExcludeKeys] | None:
        ids = [entry.id for entry in exclude or ()]
        for index, attack_id in enumerate(ids):
            if attack_id in ids[:index]:
                raise Within(f"{attack_id} is excluded twice; keep one entry", index)
        return exclude

    @field_validator("protocol")
    @classmethod
    def _an_era(cls, protocol: str | None) -> str | None:
        if protocol is not None and protocol not in elicitation.PROTOCOLS:
            raise ValueError(f"{protocol} is no era the harness speaks")
        return protocol

    @model_validator(mode="after")
    def _pending_calls_name_what_they_know(self) -> ProfileKeys:
        pending = self.confirmation.pending if self.confirmation is not None else None
        if pending is not None and (found := pending.names_problem(tuple(carried_names(self.args)))):
            problem, at = found
            raise Within(problem, "confirmation", "pending", *at)
        return self

    @field_validator("zygote")
    @classmethod
    def _module_names(cls, modules: list[str]) -> list[str]:
        for module in modules:
            if not all(part.isidentifier() for part in module.split(".")):
                raise ValueError(f"{module!r} is not a module name (dotted identifiers, e.g. mcp.server)")
        return modules

    @field_validator("files")
    @classmethod
    def _inside_the_root(cls, files: dict[str, str]) -> dict[str, str]:
        for name in files:
            if Path(name).is_absolute() or ".." in Path(name).parts or not name.strip():
                raise ValueError(f"{name!r} is not a path inside the root")
        return files

    def settings(self, source: str) -> dict[str, Any]:
        """The Profile's fields for every key the profile gives: what it does not give keeps the default."""
        # The effect kinds are read here, not above: a profile's typo is told before they are imported.
        from ..oracle.effect_spec import parse_effects, parse_ignore

        out: dict[str, Any] = {}
        where = f"profile {source}"
        for name in self.model_fields_set:
            value = getattr(self, name)
            if name == "env":
                raw_env = {
                    k: v.model_dump(exclude_unset=True) if isinstance(v, Keys) else v
                    for k, v in value.items()
                }
                value = parse_env(raw_env, source=source, environ=os.environ)
            elif name in ("servers", "server"):
                continue  # servers.py reads them (the loader takes them out first)
            elif name == "url_elicitation":
                if value is None:
                    continue
                value = url_people(value.model_dump(exclude_unset=True), source)
            elif name == "protocol":
                value = elicitation.protocol(value, source)
            elif name in ("extra_args", "factory_args", "stage_as"):
                value = dict(value or {})
            elif name in ("call_timeout", "start_timeout", "ttl", "answer_after"):
                value = float(value)
            elif name == "answer_deadline":
                value = float(value) if value is not None else None
            elif name == "setup":
                value = tuple(call.call() for call in value or ())
            elif name == "drift":
                value = value.call() if value is not None else None
            elif name == "effect":
                value = parse_effects(
                    [e.model_dump(by_alias=True, exclude_unset=True) for e in value or ()], source
                )
            elif name == "ignore":
                value = parse_ignore(value, source)
            elif name == "headers":
                value = http_headers.from_mapping(value, source=where, environ=os.environ)
            elif name == "principals":
                out["principal_steps"] = {
                    who: human.parse_steps(spec.steps, f"{where}: principals.{who}.steps")
                    for who, spec in value.items()
                    if spec.steps is not None
                }
                value = {
                    who: http_headers.from_mapping(
                        spec.headers, source=f"{where}: principal {who}", environ=os.environ
                    )
                    for who, spec in value.items()
                    if spec.headers is not None
                }
            elif name == "confirmation":
                value = value.mechanism(source) if value is not None else None
            elif name == "zygote":
                value = tuple(value)
            elif name == "exclude":
                value = {entry.id: entry.reason for entry in value or ()}
            elif name == "policy_tools":
                value = tuple(value) if value is not None else None
            elif name == "approver":
                value = value.approver(source) if value is not None else None
            out[name] = value
        return out
