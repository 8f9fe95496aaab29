"""Target profiles: what to launch and how to talk to it, as checked data.

A profile is optional: zero configuration discovers the tool, its path
argument and the path style. A profile pins what discovery would guess, or
says what it cannot (an answer template, the environment, a TTL flag).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..channels.base import Step
from ..channels.http import HttpCall
from ..confirmations import Mechanism, profile_keys
from ..confirmations.pending import Pending
from ..errors import UsageError
from ..oracle.effects import ProbeSpec
from . import headers as http_headers
from . import placeholders
from .contract import read
from .environment import TargetEnv
from .headers import Header
from .keys import DEFAULT_URL, ProfileKeys, carried_names
from .keys import ROOT_FROM as ROOT_FROM
from .keys import Approver as Approver
from .keys import DriftCall as DriftCall
from .keys import SetupCall as SetupCall
from .programs import beside_interpreter
from .servers import Servers, servers_from
from .url_mode import UrlPeople
from .yamlfile import read_yaml

# An in-process factory takes its lifetime as a keyword: ttl_flag "ttl_seconds={ttl}".
_TTL_KEYWORD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=\{ttl\}$")


@dataclass(frozen=True, slots=True)
class Profile:
    name: str = "target"
    command: str = ""
    # The target's version as the reports should name it, for servers that do
    # not say it themselves (e.g. the PyPI release a profile pins).
    version: str | None = None
    # For a proxy target: the upstream process it forwards the audited tool to, as findings name it.
    upstream: str | None = None
    # `${NAME}` filled in from the harness's environment; values marked secret are scrubbed like headers.
    env: TargetEnv = field(default_factory=TargetEnv)
    # "arg": the command has a {root} placeholder. "cwd": the server works in
    # its current directory (which is the root; MCP_AUDIT_ROOT says it too).
    root_from: str = "arg"
    tool: str | None = None
    path_arg: str | None = None
    paths: str = "auto"
    confines_paths: bool = False
    extra_args: Mapping[str, Any] = field(default_factory=dict)
    # The action: setup calls before every use, the argument template ({NAME}
    # from setup, {path} a case file, {sink} the sink's URL), and how to see
    # that it happened beyond the sandbox, which is always watched.
    setup: tuple[SetupCall, ...] = ()
    args: Mapping[str, Any] | None = None
    # Arguments of args: written through a placeholder spelled out at load ({profile_dir}): the
    # operator's environment, not the action's identity, so never varied (each setup call has its own).
    fixed_args: frozenset[str] = frozenset()
    # A call of the target's own tools that changes the subject after the question (subject-drift).
    drift: DriftCall | None = None
    # Another record's fields the stage call can state in place of the item's own (stage-time-fields).
    stage_as: Mapping[str, Any] = field(default_factory=dict)
    effect: tuple[ProbeSpec, ...] = ()
    # Root paths or result fields that are the target's bookkeeping.
    ignore: tuple[str, ...] = ()
    # Attacks the profile leaves out (`exclude:`), each with its reason.
    exclude: Mapping[str, str] = field(default_factory=dict)
    # Files written into the root before the target starts ({sink} allowed).
    files: Mapping[str, str] = field(default_factory=dict)
    # "process": a fresh target process (and root) for every attack, for a
    # target whose world carries over from one attack to the next.
    isolation: str = "run"
    # Modules a zygote imports once; every process of the target is forked from it (target/zygote.py).
    zygote: tuple[str, ...] = ()
    answer: Mapping[str, Any] | None = None
    negative_answer: Mapping[str, Any] | None = None
    call_timeout: float = 15.0
    # Seconds the target itself waits for its person before it gives up, when longer than a
    # round trip: a round nobody answers may take this plus call_timeout. None: call_timeout.
    answer_deadline: float | None = None
    # The person's pace: seconds after a question before their answer (in band: MRTR, elicitation).
    answer_after: float = 0.0
    start_timeout: float = 20.0
    # A command with {port} serves Streamable HTTP: the harness starts it on a
    # free loopback port and connects to `url` with the same port.
    url: str = DEFAULT_URL
    # The directory a running server (a URL target) works in; the harness
    # makes its cases in a fresh folder inside it.
    root: str | None = None
    # Keywords for an in-process factory, after the root.
    factory_args: Mapping[str, Any] = field(default_factory=dict)
    # Processes of the target started side by side on one root, for the
    # cross-replica family; with shared_key_env every process the harness
    # starts gets the same fresh 32-byte request-state key in that variable.
    replicas: int = 1
    shared_key_env: str | None = None
    # How many redemptions of one approval the double-spend family sends at once.
    redemptions: int = 8
    # How to shorten the target's confirmation lifetime, for the expiry family:
    # words added to the command ("--ttl-seconds {ttl}"), or for an in-process
    # factory a keyword ("ttl_seconds={ttl}").
    ttl_flag: str | None = None
    ttl: float = 1.0
    # In-process targets: run every attack the SDK's boundary refused again
    # without it (false: only the attacks, e.g. to time them against stdio).
    ablation: bool = True
    # Sent on every HTTP request of every connection (the identity that is asked
    # and approves); values are credentials, so they are never shown (see headers.py).
    headers: tuple[Header, ...] = ()
    # Other authenticated identities, by name, each with all of its own headers
    # (the profile's are not added to them), for the cross-principal family.
    principals: Mapping[str, tuple[Header, ...]] = field(default_factory=dict)
    # Second paired devices, by name: the steps that read each one's credentials (approver-identity).
    principal_steps: Mapping[str, tuple[Step, ...]] = field(default_factory=dict)
    # A header the target takes as the caller's identity (a gateway's principal
    # header): cross-principal sends the victim's value of it with another's credentials.
    identity_header: str | None = None
    # How the audited tool confirms, when not MRTR or not to be detected; and the
    # agent-callable tools that change the gate's own rules (profile/confirmation_keys.py).
    confirmation: Mechanism | None = None
    # None: found from the tools' schemas; () turns policy-self-loosening off.
    policy_tools: tuple[str, ...] | None = None
    # Where the gated tool takes who approves from the call (approver-substitution); None: found by name.
    approver: Approver | None = None
    # The target runs under a pseudo-terminal the harness answers on as the person
    # (channels/terminal.py); without it a target has no controlling terminal.
    tty: bool = False
    # "confined": the target's processes get a network namespace of their own (loopback only) where
    # they need no loopback peer; "host": the host's network (target/confine.py).
    network: str = "confined"
    # "auto": confined where the kernel allows; "off" (--mcp-no-confinement); "required"
    # (--mcp-require-confinement: a run that cannot confine its target stops).
    confinement: str = "auto"
    # Who opens a URL-mode elicitation's page: the person's browser, another person's (url_mode.py).
    url_elicitation: UrlPeople = field(default_factory=UrlPeople)
    # Several servers on one root, and the server of each tool a step names (servers.py);
    # None: the one server `command` starts.
    servers: Servers | None = None
    # The protocol era every connection asks for (confirmations/elicitation.py): auto negotiates.
    protocol: str = "auto"
    # The seed for generated hostile names when --mcp-seed does not give one:
    # a profile whose review is checked in pins it, so the same command
    # regenerates the same review.
    seed: int | None = None
    source: str = "--mcp-target"

    @property
    def is_url(self) -> bool:
        return self.command.startswith(("http://", "https://"))

    @property
    def is_in_process(self) -> bool:
        return self.command.startswith("py:")

    @property
    def serves_http(self) -> bool:
        """A command the harness starts, then reaches over Streamable HTTP."""
        return not self.is_url and not self.is_in_process and "{port}" in self.command

    @property
    def uses_sink(self) -> bool:
        """Whether the harness must run its loopback sink for this target."""
        if any(spec.kind == "sink" for spec in self.effect):
            return True
        words = [
            self.command,
            *self.env.values(),
            *self.files.values(),
            repr(self.args),
            repr(self.setup),
            repr(self.drift),
        ]
        return any("{sink}" in word for word in words)

    @property
    def transport(self) -> str:
        if self.is_in_process:
            return "in-process"
        return "http" if self.is_url or self.serves_http else "stdio"

    def every_header(self) -> Iterator[Header]:
        """The profile's headers, every principal's and the human's: what must be scrubbed from any text kept."""
        yield from self.headers
        for principal in self.principals.values():
            yield from principal
        yield from profile_keys.human_headers(self.confirmation)
        yield from self.url_elicitation.every_header()

    def secrets(self) -> tuple[str, ...]:
        """Every credential the profile holds: header values (and their tokens) and secret env values.

        Scrubbed from every text the harness keeps or reports, wherever it appears:
        a server that takes the same token on its command line (`--token T`) included.
        """
        return (*http_headers.secret_values(self.every_header()), *self.env.secrets)

    def argv(self, root: Path, port: int | None = None) -> list[str]:
        """The command line with the sandbox root (and port) put where the server takes them."""
        words = shlex.split(self.command)
        if words:
            words[0] = beside_interpreter(words[0])
        out = [word.replace("{root}", str(root)) for word in words]
        return [word.replace("{port}", str(port)) for word in out] if port is not None else out

    def with_ttl(self) -> Profile:
        """This target with its confirmation lifetime shortened to `ttl` seconds."""
        assert self.ttl_flag is not None
        ttl = f"{self.ttl:g}"
        if self.is_in_process:
            keyword = _TTL_KEYWORD.match(self.ttl_flag)
            assert keyword is not None
            return replace(self, factory_args={**self.factory_args, keyword.group(1): self.ttl})
        return replace(self, command=f"{self.command} {self.ttl_flag.replace('{ttl}', ttl)}")


def load_profile(path: Path) -> Profile:
    raw = read_yaml(path, "profile", "pass a YAML file from targets/ or your own")
    if not isinstance(raw, Mapping):
        raise UsageError(
            f"profile {path} must be a mapping of settings, e.g. 'command: my-server --root {{root}}'"
        )
    # A target started in its root cannot find a script named relative to the profile:
    # {profile_dir} says where the profile is, in any string of it.
    # Which arguments it stood in is kept past load: those values are never varied.
    fixed_args, fixed_setup = placeholders.written_through(raw)
    raw = placeholders.spelled_out(raw, str(path.parent.resolve()))
    profile = profile_from_mapping(raw, source=str(path))
    setup = tuple(
        replace(step, fixed=fixed_setup[number]) if number in fixed_setup else step
        for number, step in enumerate(profile.setup)
    )
    return replace(profile, setup=setup, fixed_args=fixed_args)


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Names the harness itself fills in an action's templates.
HARNESS_NAMES = ("path", "sink", "root")


def _check_placeholders(profile: Profile) -> None:
    """Every {NAME} in args:, setup: and drift: is saved by an earlier setup call or given by the harness."""
    known = set(HARNESS_NAMES)
    for number, step in enumerate(profile.setup, start=1):
        _names_known(profile.source, f"setup call {number} ({step.tool})", step.args, known)
        known |= set(step.save)
    _names_known(profile.source, "args", profile.args or {}, known)
    if profile.drift is not None:
        _names_known(profile.source, f"drift ({profile.drift.tool})", profile.drift.args, known)


def _names_known(source: str, where: str, template: Any, known: set[str]) -> None:
    for name in _PLACEHOLDER.findall(repr(template)):
        if name not in known:
            saved = sorted(known - set(HARNESS_NAMES))
            given = (
                f"earlier setup calls save {', '.join(saved)}; "
                if saved
                else "no earlier setup call saves it; "
            )
            raise UsageError(
                f"profile {source}: {where} names {{{name}}}, which nothing provides: {given}"
                "the harness provides {path} (the case file), {root} (the sandbox root) and {sink} (its loopback sink)"
            )


def profile_from_mapping(raw: Mapping[str, Any], *, source: str) -> Profile:
    """The profile `raw` says, checked against the contract (`keys.ProfileKeys`); one line if it is wrong."""
    read(ProfileKeys, raw, source)
    placeholders.check(raw, source)
    # servers.py checks the servers a step names against servers: and takes every server: out; what is
    # left is read again, as with one server.
    raw, servers = servers_from(raw, source)
    keys = read(ProfileKeys, raw, source)
    profile = Profile(source=source, servers=servers, **keys.settings(source))
    _check_placeholders(profile)
    mechanism = profile.confirmation
    if isinstance(mechanism, Pending) and mechanism.execute is not None:
        # The agent's confirming call may name what setup saved: the action's args carry it.
        execute = replace(mechanism.execute, carried=carried_names(profile.args))
        profile = replace(profile, confirmation=replace(mechanism, execute=execute))
    return profile


def resolve_profile(profile: Profile | None, target: str | None, root_from: str | None) -> Profile:
    """Combine a profile with --mcp-target (which overrides its command) and check it can run."""
    result = profile or Profile()
    if target:
        result = replace(result, command=target, source="--mcp-target")
    if root_from:
        result = replace(result, root_from=root_from)
    if not result.command:
        raise UsageError("no target: pass --mcp-target 'server --root {root}' or a profile with a 'command'")
    _check_topology(result)
    if not result.is_url and not result.is_in_process:
        try:
            words = shlex.split(result.command)
        except ValueError as exc:
            raise UsageError(
                f"{result.source}: cannot split the command line ({exc}); check its quotes"
            ) from None
        if not words:
            raise UsageError(f"{result.source}: the command is empty")
        has_placeholder = any("{root}" in word for word in words)
        if problem := _relative_script(result, words):
            raise UsageError(f"{result.source}: {problem}")
        if result.root_from == "arg" and not has_placeholder:
            raise UsageError(
                f"{result.source}: the command has no {{root}} placeholder; put {{root}} where the server takes "
                "its directory (e.g. 'my-server --root {root}'), or pass --mcp-root-from cwd if it works in its "
                "current directory or reads MCP_AUDIT_ROOT (to `run`, after a second --: "
                "'run -- my-server -- --mcp-root-from cwd'; in a profile: 'root_from: cwd')"
            )
    return result


# What a command line's word must look like to be read as a script the target runs.
_SCRIPTS = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".rb", ".pl", ".php", ".jar")


def _relative_script(profile: Profile, words: list[str]) -> str | None:
    """A relative script path in the command: the target runs in its sandbox root, where it is not.

    Without this the server fails there with "can't open file '/dev/shm/.../root/...'".
    A file the profile seeds into the root (`files:`) is where the path says.
    """
    here = Path(profile.source).parent if profile.source != "--mcp-target" else None
    for word in words:
        path = Path(word)
        if word.startswith("-") or "{" in word or "=" in word or path.is_absolute() or word in profile.files:
            continue
        if path.suffix not in _SCRIPTS and not word.startswith(("./", "../")):
            continue
        if here is not None and (here / path).exists():
            fix = f"write {{profile_dir}}/{path.as_posix()} (beside the profile) or an absolute path"
        elif path.exists():
            fix = f"write its absolute path, {path.resolve()}"
        else:
            fix = "give its absolute path (or {profile_dir}/... for one beside the profile)"
        return (
            f"the command names {word!r}, a relative path, but the target runs in its sandbox root, "
            f"where it is not: {fix}"
        )
    return None


def _check_topology(profile: Profile) -> None:
    """What only some kinds of target can do: replicas, shared keys, a shorter lifetime, a served root."""
    where = profile.source
    if profile.is_url:
        if not profile.root:
            raise UsageError(
                f"{where}: a URL target works in a directory of its own; pass --mcp-root DIR (or 'root:' in "
                "the profile) naming the directory it serves, one made for the audit"
            )
        if not Path(profile.root).is_dir():
            raise UsageError(f"{where}: root {profile.root!r} is not a directory")
    elif profile.root:
        raise UsageError(
            f"{where}: 'root' is only for a URL target; a target the harness starts gets a fresh root"
        )
    if profile.is_in_process:
        if profile.shared_key_env:
            raise UsageError(
                f"{where}: shared_key_env gives a key to processes the harness starts; an in-process factory "
                "chooses its own keys (pass them through factory_args)"
            )
        if profile.ttl_flag and not _TTL_KEYWORD.match(profile.ttl_flag):
            raise UsageError(
                f"{where}: for an in-process target ttl_flag names a keyword, e.g. 'ttl_seconds={{ttl}}'"
            )
    elif profile.factory_args:
        raise UsageError(f"{where}: factory_args is only for an in-process target (py:module:factory)")
    url = profile.command if profile.is_url else None
    served = {
        name: profile.transport if index == 0 else ("http" if "{port}" in command else "stdio")
        for index, (name, command) in enumerate(profile.servers.commands if profile.servers else ())
    }
    approver = profile.approver.steps if profile.approver is not None else ()
    if problem := profile_keys.target_url_problem(
        profile.confirmation, profile.transport, url, served, approver
    ):
        raise UsageError(f"{where}: {problem}")
    # Principals are also who else may take the person's steps (approver-identity): their headers
    # go on the person's own requests, which are HTTP whatever the target speaks.
    persons_requests = any(isinstance(s, HttpCall) for s in profile_keys.human_steps(profile.confirmation))
    if (profile.headers or (profile.principals and not persons_requests)) and profile.transport != "http":
        raise UsageError(
            f"{where}: headers and principals are sent over HTTP, and this target speaks {profile.transport}; "
            "serve it over Streamable HTTP ({port} in the command) or give its URL (principals also go "
            "on the person's own requests: an http or follow step of confirmation's human:)"
        )
