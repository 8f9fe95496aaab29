"""The profile's `confirmation:` and `policy_tools:` keys, as models that build the mechanism.

confirmation:
  kind: token                         # mrtr | token | pending | flag
  preview: {dry_run: true}            # token: what makes the first call a preview
  token: {from: confirm_token, into: confirm_token}
  # token: {preview: {tool: simulate_impact, args: {change: "{change_id}"}}}   # the preview is another tool
  # pending: {id_from: action_id, approve: {tool: approve, args: {action_id: "{id}"}}}
  # pending: {id_from: staged_id, human: {command: "approve-cli {id} approved", decline: "..."},
  #           execute: {tool: execute_pending, args: {pending_id: "{id}"}}}
  # pending: {human: {http: {url: "{url}/approvals/{id}", method: POST, json: {decision: approved},
  #                          headers: {Authorization: "Bearer ${APPROVER_TOKEN}"}},
  #                   decline: {http: {url: "{url}/approvals/{id}", json: {decision: declined}}}}}
  # flag: {arg: human_approved, value: true}
policy_tools: [set_frame]
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ..channels import human
from ..channels.base import PLACEHOLDER
from ..channels.http import RequestKeys
from ..confirmations import profile_keys
from ..confirmations.base import Mechanism
from ..confirmations.token import PREVIEW_FIELD
from .contract import Keys, Within, key

KINDS = ("mrtr", "token", "pending", "flag", "waits")
_NAME = r"\S"
# A person's steps (`read`, `command`, `http`, `follow`, `sign`, `terminal`, each with `save`): each kind's keys
# are a model in its module of channels/, and the list's type (every {NAME} known) is channels/human.py's.
if TYPE_CHECKING:
    from ..channels.base import StepKeys

    Steps = list[StepKeys | str]
else:
    Steps = human.steps_type()
# What is meant as a field of the preview's reply: `{preview.change_id}`, but also `{preview}`, `{preview.}`.
_PREVIEW_MEANT = re.compile(r"\{preview\b[^{}]*\}")
_STEPS = "a list of one or more of the person's steps, e.g. [{command: 'approve-cli {id}'}] or [{read: {from: sink, json: approve_url}, save: link}, {follow: {link: link}}]"


class TokenPreviewKeys(Keys):
    """A preview made by another tool than the gated one, with arguments of its own."""

    tool: str = key(
        ...,
        "The tool whose result hands out the token (a simulate_impact, a plan_change).",
        accepts="the name of a tool of the target",
        example="simulate_impact",
        pattern=_NAME,
    )
    args: dict[str, Any] | None = key(
        None,
        "Its arguments; {NAME} in a string is the gated call's argument of that name, {tool} the gated "
        "tool; unset: the gated call's own arguments.",
        accepts="a mapping of argument names to values",
        example={"operation": "{tool}", "target": "{path}"},
    )


class TokenKeys(Keys):
    """Where a token flow's token comes from and where the confirming call carries it."""

    preview: TokenPreviewKeys | None = key(
        None,
        "The preview, when another tool makes it: the tool and its arguments; unset: the gated tool "
        "previews (with confirmation.preview).",
        accepts="a mapping with tool and args",
        example={"tool": "simulate_impact", "args": {"operation": "{tool}", "target": "{path}"}},
    )

    token_from: str | None = key(
        None,
        "The result field (or a dotted path into the result, e.g. challenge.nonce) the preview hands the "
        "token out in; unset: the first field named like a token.",
        accepts="a field name or a dotted path",
        example="confirm_token",
        alias="from",
        pattern=_NAME,
    )
    human: Steps | None = key(
        None,
        "The person's steps that answer the token (e.g. sign the challenge: {sign: {command: ...}}).",
        accepts=_STEPS,
        example=[{"sign": {"command": "signer {challenge}"}}],
    )
    into: (
        Annotated[str, Field(pattern=_NAME)]
        | dict[Annotated[str, Field(pattern=_NAME)], Annotated[str, Field(pattern=_NAME)]]
    ) = key(
        "confirm_token",
        "The argument of the confirming call that carries the token (with human:, what the person saved as "
        "evidence in its place); or several arguments, each with what it carries: {challenge} (the token "
        "handed out), {id}, {token}, a name the person's steps saved ({challenge: '{challenge}', "
        "approval: '{signature}'}), or {preview.NAME}, a field (or dotted path) of the preview's reply "
        "({change_id: '{preview.change_id}', confirmation_token: '{token}'}). An argument naming what the "
        "agent alone does not have, or a field the reply of that use's preview lacks, is left out of its "
        "own calls.",
        accepts="an argument name, or a mapping of argument names to {NAME} or {preview.NAME}",
        example="confirm_token",
    )

    @field_validator("into")
    @classmethod
    def _fields_name_something(cls, into: str | dict[str, str]) -> str | dict[str, str]:
        if isinstance(into, dict) and not into:
            raise ValueError("names no argument: give at least one, e.g. {challenge: '{challenge}'}")
        return into

    @model_validator(mode="after")
    def _fields_known(self) -> TokenKeys:
        if not isinstance(self.into, dict):
            return self
        saved = (n for step in self.human or () if not isinstance(step, str) for n in step.saved().names)
        known = ("challenge", "token", "id", *saved)
        for sent in self.into.values():
            for meant in _PREVIEW_MEANT.findall(sent):
                if not PREVIEW_FIELD.fullmatch(meant):
                    raise Within(
                        f"names {meant}, which is no field of the preview's reply: write {{preview.NAME}}, "
                        "NAME a field (or dotted path) of it, e.g. {preview.change_id}",
                        "into",
                    )
            if problem := human.names_problem(sent, known):
                # A bare name is only ever what the person saved: a field the preview returned has its own form.
                unknown = min(set(PLACEHOLDER.findall(sent)) - set(known))
                raise Within(
                    f"{problem}; a field the preview's reply returned is written {{preview.{unknown}}}",
                    "into",
                )
        return self


class CallKeys(Keys):
    """A tool call of a pending flow; string arguments may say {id}, the pending id."""

    tool: str = key(
        ...,
        "The tool to call.",
        accepts="the name of a tool of the target",
        example="execute_pending",
        pattern=_NAME,
    )
    args: dict[str, Any] = key(
        {},
        "Its arguments; {id} in a string is the pending id.",
        accepts="a mapping of argument names to values",
        example={"pending_id": "{id}"},
    )

    server: str | None = key(
        None,
        "With servers:, the server this tool is on (unset: the first server).",
        accepts="the name of one of servers:",
        example="post",
        pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$",
    )


class HttpStepKeys(RequestKeys):
    """A request the person's own client sends to an approval endpoint on this machine."""

    url_names: ClassVar[tuple[str, ...] | None] = human.URL_NAMES

    url: str = key(
        ...,
        "The approval endpoint: {url} (at its start) is the target's base URL when it is served over HTTP, "
        "{id} the pending id; any fixed URL must be on loopback.",
        accepts="a URL with {id}, or starting with {url}",
        example="{url}/approvals/{id}",
    )

    @model_validator(mode="after")
    def _says_the_id(self) -> HttpStepKeys:
        if "{id}" not in self.url + repr(self.body):
            raise ValueError(
                "must say {id} (in its url or json) where the pending id goes, e.g. {url: '{url}/approvals/{id}'}"
            )
        return self


class HumanStepKeys(Keys):
    """One thing the person does on a channel of their own: run a command, or send a request."""

    command: str | None = key(
        None,
        "A command line the person runs in the sandbox root ({root}); {id} is the pending id.",
        accepts="a command line with {id} where the pending id goes",
        example="approve-cli {id} approved",
        pattern=r"\{id\}",
    )
    http: HttpStepKeys | None = key(
        None,
        "A request to the approval endpoint.",
        accepts="a mapping with url (and method, json, headers)",
        example={"url": "{url}/approvals/{id}", "json": {"decision": "approved"}},
    )
    server: str | None = key(
        None,
        "With servers:, the server an http step's {url} is (unset: the first server).",
        accepts="the name of one of servers:",
        example="post",
        pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$",
    )

    @model_validator(mode="after")
    def _one_way(self) -> HumanStepKeys:
        if self.command is not None and self.http is not None:
            raise ValueError("takes 'command' or 'http', not both")
        if self.command is not None and self.server is not None:
            raise ValueError("a command runs on this machine, not on a server: server: is for http")
        if self.command is None and self.http is None:
            raise ValueError(
                "needs 'command' (a command line) or 'http' (a request), with {id}, "
                "e.g. {command: 'approve-cli {id} approved'}"
            )
        return self


def _decline_form(value: Any) -> str:
    return "command" if isinstance(value, str) else "step"


class HumanKeys(HumanStepKeys):
    """How the person approves on a channel of their own, and how they decline."""

    decline: (
        Annotated[
            Annotated[str, Tag("command")] | Annotated[HumanStepKeys, Tag("step")],
            Discriminator(_decline_form),
        ]
        | None
    ) = key(
        None,
        "How the person declines: a command line, or a step of its own ({command: ...} or {http: ...}).",
        accepts="a command line with {id}, or a mapping with command or http",
        example={"http": {"url": "{url}/approvals/{id}", "json": {"decision": "declined"}}},
    )

    @field_validator("decline")
    @classmethod
    def _decline_says_the_id(cls, decline: object) -> object:
        if isinstance(decline, str) and "{id}" not in decline:
            raise ValueError("a command line must say {id} where the pending id goes")
        return decline


def _human_form(value: Any) -> str:
    return "steps" if isinstance(value, list) else "one"


class PendingKeys(Keys):
    """A pending flow: the call stages the action under an id, someone approves it, maybe a tool then acts."""

    id_from: str | None = key(
        None,
        "The result field that holds the pending id; unset: the first field named like an action id.",
        accepts="a field name",
        example="pending_id",
        pattern=_NAME,
    )
    id_pattern: str | None = key(
        None,
        "A regular expression over the staging call's reply, for an id said in prose (an error that says "
        "'request abc123, expires in 10 minutes'): its first group is the pending id.",
        accepts="a regular expression with one group",
        example="request (\\S+?),",
        min_length=1,
    )
    approve: CallKeys | None = key(
        None,
        "The agent-callable tool that approves (a flaw in itself, audited as one).",
        accepts="a mapping with tool and args",
        example={"tool": "approve", "args": {"action_id": "{id}"}},
    )
    human: (
        Annotated[
            Annotated[HumanKeys, Tag("one")] | Annotated[Steps, Tag("steps")],
            Discriminator(_human_form),
        ]
        | None
    ) = key(
        None,
        "How the harness plays the person on a channel of their own: one step, or a list of steps.",
        accepts="a mapping with command or http (and decline), or " + _STEPS,
        example={"command": "approve-cli {id} approved"},
    )
    decline: Steps | None = key(
        None,
        "With a list of human: steps, the steps by which the person declines.",
        accepts=_STEPS,
        example=[{"command": "approve-cli {id} declined"}],
    )
    execute: CallKeys | None = key(
        None,
        "The tool that acts once the pending action is approved.",
        accepts="a mapping with tool and args",
        example={"tool": "execute_pending", "args": {"pending_id": "{id}"}},
    )

    @field_validator("id_pattern")
    @classmethod
    def _one_group(cls, pattern: str | None) -> str | None:
        if pattern is None:
            return None
        try:
            groups = re.compile(pattern).groups
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
        if groups < 1:
            raise ValueError(f"{pattern!r} has no group: put the id in one, e.g. 'request (\\S+?),'")
        return pattern

    @model_validator(mode="after")
    def _decline_beside_steps(self) -> PendingKeys:
        if self.id_from is not None and self.id_pattern is not None:
            raise ValueError(
                "has both id_from (a result field) and id_pattern (prose): keep the one the reply has"
            )
        if self.decline is not None and not isinstance(self.human, list):
            raise Within(
                "goes with a list of human: steps; with the old human: {command: ...}, give human.decline",
                "decline",
            )
        return self

    def execute_names(self, carried: tuple[str, ...]) -> tuple[str, ...]:
        """What the agent's confirming call may name: the pending id, what the person's steps saved
        (an evidence id), and `carried`, names saved by setup that the action's args carry whole."""
        steps = self.human if isinstance(self.human, list) else []
        saved = (n for step in steps if not isinstance(step, str) for n in step.saved().names)
        return ("id", *saved, *carried)

    def names_problem(self, carried: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
        """Why a string argument of execute or approve names what it will not know, and where; None if none."""
        for call, known in (("execute", self.execute_names(carried)), ("approve", ("id",))):
            keys = getattr(self, call)
            for arg, sent in (keys.args if keys is not None else {}).items():
                if isinstance(sent, str) and (problem := human.names_problem(sent, known)):
                    if call == "execute":
                        problem += (
                            " (a name saved by setup: is known here when the action's args: carry it "
                            "whole, e.g. args: {ticket_id: '{ticket}'})"
                        )
                    return problem, (call, "args", arg)
        return None


class WaitsKeys(Keys):
    """A call that waits while the person answers elsewhere (a terminal prompt)."""

    human: Steps = key(
        ...,
        "The steps the person takes while the call waits.",
        accepts=_STEPS,
        example=[{"terminal": {"expect": "allow\\? \\[y/N\\]", "answer": "y"}}],
    )
    decline: Steps | None = key(
        None,
        "The steps by which the person declines.",
        accepts=_STEPS,
        example=[{"terminal": {"expect": "allow\\? \\[y/N\\]", "answer": "n"}}],
    )


class MrtrKeys(Keys):
    """An MRTR question the person answers somewhere else: the call answers `input_required`, the server
    sends the person a link (a webhook, a chat), and waits for the client to retry with its requestState."""

    human: Steps = key(
        ...,
        "The steps the person takes on their own channel before the client retries with the requestState "
        "(read the link from the sink, follow it); taken once per question, when the client accepts it.",
        accepts=_STEPS,
        example=[
            {"read": {"from": "sink", "json": "approve_url"}, "save": "link"},
            {"follow": {"link": "link"}},
        ],
    )

    @field_validator("human")
    @classmethod
    def _no_handle(cls, steps: list[StepKeys | str]) -> list[StepKeys | str]:
        if problem := no_handle(steps, "an MRTR question"):
            raise Within(*problem)
        return steps


def no_handle(steps: list[StepKeys | str], what: str) -> tuple[str, int] | None:
    """Why (and in which step) steps taken where no flow hands out an id, challenge or token name one."""
    for index, item in enumerate(steps):
        text = item if isinstance(item, str) else item.templates()
        for name in ("id", "challenge", "token"):
            if "{" + name + "}" in text:
                return (
                    f"names {{{name}}}, which {what} does not hand out (no pending id, challenge or "
                    "token): read what the person is sent instead, e.g. {read: {from: sink, json: "
                    "approve_url}, save: link}",
                    index,
                )
    return None


class FlagKeys(Keys):
    """The argument the agent sets to say a person approved."""

    arg: str = key(
        ...,
        "The argument that says it was approved.",
        accepts="an argument name",
        example="human_approved",
        pattern=_NAME,
    )
    value: Any = key(True, "The value that says so.", accepts="any value", example=True)


_FOR_KIND = {"mrtr": "mrtr", "token": "token", "pending": "pending", "flag": "flag", "waits": "waits"}


class ConfirmationKeys(Keys):
    """How the audited tools confirm, when not MRTR or not to be detected."""

    kind: Literal["mrtr", "token", "pending", "flag", "waits"] = key(
        ...,
        "The mechanism.",
        accepts=f"one of {', '.join(KINDS)}",
        example="token",
    )
    preview: dict[str, Any] | None = key(
        None,
        "token: the arguments that make the first call a preview.",
        accepts="a mapping of argument names to values",
        example={"dry_run": True},
    )
    mrtr: MrtrKeys | None = key(
        None,
        "mrtr: the person's steps on a channel of their own before the retry (a link posted to a webhook); "
        "unset: the question is answered in the client.",
        accepts="a mapping with human",
        example={
            "human": [
                {"read": {"from": "sink", "json": "approve_url"}, "save": "link"},
                {"follow": {"link": "link"}},
            ]
        },
    )
    token: TokenKeys | None = key(
        None,
        "token: where the token comes from and where it goes.",
        accepts="a mapping with from and into",
        example={"from": "confirm_token", "into": "confirm_token"},
    )
    pending: PendingKeys | None = key(
        None,
        "pending: the id, who approves, and what acts.",
        accepts="a mapping with id_from, approve, human, execute",
        example={
            "id_from": "pending_id",
            "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
        },
    )
    waits: WaitsKeys | None = key(
        None,
        "waits: the person's steps while the call waits.",
        accepts="a mapping with human (and decline)",
        example={"human": [{"terminal": {"expect": "allow\\? \\[y/N\\]", "answer": "y"}}]},
    )
    flag: FlagKeys | None = key(
        None,
        "flag: the argument that says a person approved.",
        accepts="a mapping with arg (and value)",
        example={"arg": "human_approved", "value": True},
    )

    @model_validator(mode="after")
    def _keys_of_its_kind(self) -> ConfirmationKeys:
        for name, kind in (("preview", "token"), *_FOR_KIND.items()):
            if getattr(self, name) is not None and self.kind != kind:
                raise ValueError(
                    f"has '{name}', which is for kind {kind}, and kind is {self.kind}; remove one of them"
                )
        if self.preview is not None and self.token is not None and self.token.preview is not None:
            raise ValueError(
                "has both 'preview' (arguments of the gated tool's own preview) and 'token.preview' (another "
                "tool that previews); keep the one this server uses"
            )
        if self.kind == "flag" and self.flag is None:
            raise ValueError(
                "of kind flag needs 'flag' with 'arg', the argument that says it was approved, e.g. flag: {arg: human_approved}"
            )
        if self.kind == "waits" and self.waits is None:
            raise ValueError(
                "of kind waits needs 'waits' with 'human', the steps the person takes while the call waits, "
                "e.g. waits: {human: [{terminal: {expect: 'allow\\? \\[y/N\\]', answer: y}}]}"
            )
        return self

    def mechanism(self, source: str) -> Mechanism:
        """The mechanism the profile states, for every tool it audits: built from these checked keys by
        confirmations/profile_keys.py."""
        return profile_keys.confirmation(self, source)
