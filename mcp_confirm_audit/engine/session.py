"""One audit of one target: the process(es), the sandbox, controls, attacks.

The SDK client is async; pytest items are not. A blocking portal runs one
event loop in a background thread for the whole session, so the target is
started once and every item drives it through the same connection. Other
connections (another process, replicas, more clients of the same process, a
short-lived process, the target without its SDK boundary) are opened the first
time an attack asks for one, and kept.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from ..catalogue.generation import Generation, generation_for
from ..catalogue.loader import Catalogue, load_catalogue
from ..channels.url_flow import Pages
from ..confirmations.base import Mechanism
from ..confirmations.detect import policy_tools
from ..confirmations.elicitation import LEGACY, MODERN, Elicitation, legacy_version
from ..confirmations.mrtr import Mrtr
from ..confirmations.pending import Pending
from ..confirmations.token import Token
from ..errors import TargetError, UsageError
from ..models import (
    UNASKED,
    Ablation,
    AttackSpec,
    ControlResult,
    Layer,
    Precondition,
    Result,
    Transcript,
    Verdict,
)
from ..oracle.effects import ProbeSpec
from ..oracle.sandbox import Sandbox
from ..profile.loader import Profile
from ..target import confine, reaper
from ..target.discovery import ToolPlan, look_around, plan_tools
from ..target.driver import Connection, ToolInfo, attach
from ..target.routed import connect_servers
from ..target.zygote import Zygote, open_zygote, release_zygote, split_command
from ..techniques import mrtr_only, traits_of
from ..techniques._offers import follow_offer
from ..techniques.base import Attack
from .action import SetupFailed
from .classify import classify
from .connection_key import PRIMARY, ConnectionKey
from .controls import ControlOutcome, run_controls
from .observation import Observer
from .peers import Identity, SessionPeers
from .phases import PhaseClock
from .search import search, searchable
from .verdict import judge


def _declared(key: ConnectionKey) -> str:
    """The elicitation capability a connection's client declares."""
    return key.declares or "form+url"


def era_of(key: ConnectionKey, pinned: str) -> str | None:
    """The protocol a connection asks for; None: the profile's (`protocol:`)."""
    if key.era == "legacy":
        return legacy_version(pinned)
    if key.era == "modern":
        # Discovered, not pinned: pinned, the SDK adopts 2026-07-28 without asking the server, and a
        # server that only knows the handshake would look modern until its first call.
        return "auto"
    return None


@dataclass
class _Live:
    connection: Connection
    context: AbstractContextManager[Connection]
    # The connection whose process this one attached to (its clients close with it).
    parent: str | None = None


@dataclass(frozen=True, slots=True)
class _World:
    """A sandbox and the one process of the target started on it (`isolation: process`)."""

    sandbox: Sandbox
    primary: _Live


# Worlds started ahead of the attack that will use them. A start that mostly waits (on a
# database, a model, the network) overlaps this many attacks; one that burns CPU is bounded by
# the cores whatever the number.
_WARM_WORLDS = 6
# Forked from a zygote, a start costs little CPU and mostly waits (the server's own start-up):
# more of them overlap, and the cores are still free for the attacks.
_WARM_FORKED = 16


@dataclass
class Stats:
    processes_started: int = 0
    attacks_run: int = 0
    # Requests sent, over every connection closed so far (tools/list included).
    round_trips: int = 0
    tool_listings: int = 0
    # Wall seconds the harness waited on its tools/call requests (each connection's, overlaps once).
    in_round_trips: float = 0.0
    # Seconds the attacks had to let pass by design (an expiry's lifetime).
    waited: float = 0.0
    notes: list[str] = field(default_factory=list)
    # Where the wall time went (what `bench` prints).
    clock: PhaseClock = field(default_factory=PhaseClock)


class AuditSession:
    def __init__(
        self,
        profile: Profile,
        catalogue: Catalogue,
        generation: Generation | None = None,
        *,
        probes: Iterable[ProbeSpec] = (),
    ) -> None:
        self.profile = profile
        # Effect probes from outside the profile (a conftest's pytest_mcp_snapshot).
        self.extra_probes = tuple(probes)
        self.catalogue = catalogue
        self.generation = generation or generation_for(None, None, os.environ)
        self.stats = Stats()
        self.sandbox: Sandbox | None = None
        self.tools: list[ToolInfo] = []
        self.plans: list[ToolPlan] = []
        # Zero configuration: the tools not audited, each with why ("delete_all: did not ask, ...").
        self.left_out: list[str] = []
        self.server_info: dict[str, Any] = {}
        # How the target's processes are confined (target/confine.py): the report's regime line.
        self.regime = confine.regime(profile)
        # Files the confined target wrote outside its root: path as it saw it, size, the start of the text.
        self.outside_writes: list[dict[str, Any]] = []
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._live: dict[str, _Live] = {}
        # Connections being opened in the background (see `prepare`).
        self._pending: dict[str, Future[Connection]] = {}
        self._lock = threading.Lock()
        self._in_background = threading.local()
        # `isolation: process`: the worlds started ahead, and the used ones being closed.
        self._warm: deque[Future[_World]] = deque()
        self._untouched = False
        self._retiring: list[threading.Thread] = []
        self._zygote: Zygote | None = None
        # How many attacks will run, when it is known (`expect`); None: no bound on the worlds ahead.
        self._attacks_expected: int | None = None
        self._zygote_lock = threading.Lock()
        self._controls: dict[tuple[str, bool], ControlOutcome] = {}
        # What zero configuration's look around returned, by tool (the honest-flow search reads it too).
        self.seen: dict[str, Any] = {}
        # Tools audited over a legacy connection although the primary negotiated 2026-07-28:
        # they ask over a back channel (`protocol: auto` found it from what they did).
        self._legacy_tools: set[str] = set()
        # Each process is named with a number, in the order they start; a name in `_unnumbered`
        # (a process started ahead of need) is used as it is.
        self._numbered = 0
        self._unnumbered: set[str] = set()
        # The era each family of connections (by name prefix) negotiated.
        self._eras: dict[ConnectionKey, str] = {}
        # The loopback sink a target's outbound requests go to, when the profile uses one.
        self._sink: Any = None
        # What {sink} (and other harness-provided names) stand for in templates.
        self.values: dict[str, Any] = {}
        # Every process the harness starts gets the same fresh key, as replicas
        # behind one balancer would.
        self._started = profile
        if profile.shared_key_env:
            self._started = replace(
                profile, env=profile.env.with_secret(profile.shared_key_env, secrets.token_hex(32))
            )

    @property
    def ablates(self) -> bool:
        """Attacks refused by the SDK boundary run again without it: in-process targets only."""
        return self.profile.is_in_process and self.profile.ablation

    # -- lifetime -----------------------------------------------------------

    def start(self, specs: Iterable[AttackSpec] = ()) -> None:
        """Start the target; also, side by side, a second process if `specs` will need one."""
        with self.stats.clock.phase("starts"):
            self._start(specs)

    def _start(self, specs: Iterable[AttackSpec]) -> None:
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._start_sink()
            self._new_world()
            specs = list(specs)
            self.prepare(specs)
            primary = self._ensure(PRIMARY)
            self.tools = self._portal.call(primary.list_tools)
            session = primary.client.session
            info = getattr(session, "server_info", None) or getattr(
                getattr(session, "discover_result", None), "server_info", None
            )
            if info is not None:
                self.server_info = {"name": info.name, "version": info.version}
            # Zero configuration looks around first: real ids from listings, where handles come from.
            logs: tuple[tuple[str, str], ...] = ()
            readers: tuple[str, ...] = ()
            if self.profile.args is None and not self.profile.setup:
                # Zero configuration: unannotated readers, found by calling them, are read-only for this run.
                assert self.sandbox is not None
                classified = self._portal.call(classify, primary, self.tools, self.sandbox.root)
                self.tools, logs, readers = list(classified.tools), classified.bookkeeping, classified.notes
            seen = self.seen = self._portal.call(look_around, primary, self.tools, self.profile)
            self.plans = [
                replace(
                    plan,
                    probes=(*plan.probes, *self.extra_probes),
                    ignore=(*plan.ignore, *(name for name, _ in logs)),
                    bookkeeping_notes=(*plan.bookkeeping_notes, *logs),
                )
                for plan in plan_tools(self.tools, self.profile, seen)
            ]
            if self.profile.tool is None:
                self._drop_inert()
            self.left_out = [*readers, *self.left_out]
            if specs:
                self.expect(len(specs) * len(self.plans))
        except BaseException:
            self.close()
            raise

    def _drop_inert(self) -> None:
        """Zero configuration: a tool that neither asks, acts nor refuses is no gate; leave it out.

        Nor is a step of another tool's proven flow (a pending action's approve or execute
        tool) or a policy tool, when it is no gate of its own: the families of the gated tool
        judge it (self-approval, token-replay, policy-self-loosening).
        """
        inert = [plan.name for plan in self.plans if self.controls(plan.name).inert]
        steps = self._flow_steps()
        self.plans = [plan for plan in self.plans if plan.name not in inert and plan.name not in steps]
        self.left_out = [f"{name}: did not ask, and showed no effect" for name in inert]
        self.left_out += [f"{name}: {role}" for name, role in steps.items()]
        if not self.plans:
            offered = ", ".join(sorted(t.name for t in self.tools)) or "none"
            read_only = [t.name for t in self.tools if t.read_only is True]
            why = [f"{', '.join(read_only)} declared read-only"] if read_only else []
            if inert:
                why.append(f"{', '.join(inert)} did not ask for confirmation and showed no effect")
            raise TargetError(
                f"the target offers no tool to audit (tools: {offered}): {'; '.join(why)}; name one in a "
                "profile with 'tool:' (and 'args:', 'path_arg:' or 'effect:' as it needs)"
            )

    def _flow_steps(self) -> dict[str, str]:
        """Tools whose own approve control failed that are a step of, or a rule for, a proven flow."""
        proven = [(plan, self.controls(plan.name)) for plan in self.plans]
        gates = [(plan, outcome) for plan, outcome in proven if outcome.approve_ok]
        steps: dict[str, str] = {}
        for plan, outcome in gates:
            mechanism = outcome.mechanism
            if isinstance(mechanism, Pending | Token):
                for tool in mechanism.own_tools:
                    steps.setdefault(tool, f"a step of {plan.name}'s {mechanism.kind} flow")
            for info in policy_tools(self.tools, plan.policy_tools):
                steps.setdefault(info.name, f"a rule of {plan.name}'s gate, judged by policy-self-loosening")
            if outcome.search is not None:
                # A tool that makes the subject: no gate of its own, unless it acted on something unasked.
                unasked = {p.name for p, o in proven if any(r.name == UNASKED for r in o.results)}
                for step in plan.setup:
                    if step.tool not in unasked:
                        steps.setdefault(
                            step.tool, f"makes {plan.name}'s subject (setup the honest-flow search learned)"
                        )
        return {
            tool: why
            for tool, why in steps.items()
            if any(p.name == tool for p, outcome in proven if not outcome.approve_ok)
        }

    def _start_sink(self) -> None:
        if not self.profile.uses_sink or self._sink is not None:
            return
        from ..oracle.kinds.sink import Sink  # only a target that sends requests out needs it

        self._sink = Sink()
        url = self._sink.url
        self.values["sink"] = url
        started = self._started
        self._started = replace(
            started,
            command=started.command.replace("{sink}", url),
            env=started.env.replaced("{sink}", url),
        )

    def _new_world(self) -> None:
        self._enter_world(self._world_sandbox())

    def _enter_world(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        # `{root}` in args: and setup:, for a tool that takes absolute paths or its directory.
        self.values["root"] = str(sandbox.root)

    def _world_sandbox(self) -> Sandbox:
        """A fresh sandbox, with the profile's files written into its root before the target starts."""
        served = self.profile.root if self.profile.is_url else None
        sandbox = Sandbox(served_root=Path(served) if served else None)
        for name, text in self.profile.files.items():
            path = sandbox.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            text = text.replace("{root}", str(sandbox.root))
            path.write_text(text.replace("{sink}", str(self.values.get("sink", "{sink}"))))
        return sandbox

    def _warm_world(self) -> Future[_World]:
        """`isolation: process`: the next attack's world, started beside the current one.

        Its own fresh sandbox and its own process, never used before and never used again: the
        process start (most of an isolated attack's cost) overlaps the attacks before it.
        """
        world: Future[_World] = Future()

        def start() -> None:
            self._in_background.active = True
            try:
                sandbox = self._world_sandbox()
                try:
                    world.set_result(_World(sandbox, self._open_process(PRIMARY, sandbox)))
                except BaseException:
                    self._discard_sandbox(sandbox)
                    raise
            except BaseException as exc:
                world.set_exception(exc)

        threading.Thread(target=start, name="mcp-audit-warm", daemon=True).start()
        return world

    def _discard_sandbox(self, sandbox: Sandbox) -> None:
        reaper.kill_now(lambda: reaper.working_in(sandbox.base))
        self._keep_outside_writes(sandbox)
        sandbox.remove()

    def _keep_outside_writes(self, sandbox: Sandbox) -> None:
        """What the target wrote outside the root (kept apart by its confinement), before the sandbox goes."""
        found = confine.outside_writes(sandbox.base)
        with self._lock:
            known = {entry["path"] for entry in self.outside_writes}
            self.outside_writes += [entry for entry in found if entry["path"] not in known]

    def _isolate(self) -> None:
        """`isolation: process`: every connection closed, a fresh root, a fresh primary."""
        with self.stats.clock.phase("starts"):
            self._isolate_now()

    def _isolate_now(self) -> None:
        self._untouched = False
        with self._lock:
            lives, self._live = self._live, {}
        old = self.sandbox
        assert old is not None
        # The world just used goes away beside the next attack: nothing waits for its processes.
        retiring = threading.Thread(
            target=self._retire, args=(lives, old), name="mcp-audit-retire", daemon=True
        )
        retiring.start()
        self._retiring.append(retiring)
        while len(self._warm) < max(1, self._worlds_ahead()):
            self._warm.append(self._warm_world())
        try:
            world = self._warm.popleft().result()
        except BaseException:
            # The warm start failed: start it here, so its error is the one reported.
            self._new_world()
            self._ensure(PRIMARY)
        else:
            self._enter_world(world.sandbox)
            with self._lock:
                self._live[PRIMARY.name] = world.primary
        # This world's attack is not run yet: one fewer than that remain after it.
        if len(self._warm) < self._worlds_ahead() - 1:
            self._warm.append(self._warm_world())

    def _worlds_ahead(self) -> int:
        """How many worlds to have starting: never more than the attacks still to run would use."""
        ahead = _WARM_FORKED if self.profile.zygote else _WARM_WORLDS
        if self._attacks_expected is not None:
            ahead = min(ahead, self._attacks_expected - self.stats.attacks_run)
        return ahead

    def expect(self, attacks: int) -> None:
        """How many attacks this session will run (when known): worlds are not started for nothing."""
        self._attacks_expected = attacks

    def _retire(self, lives: dict[str, _Live], sandbox: Sandbox) -> None:
        """Close a used world: its clients before their processes, then its sandbox."""
        for name in reversed(list(lives)):
            self._close(lives[name])
        self._discard_sandbox(sandbox)

    def observer(self, probes: Iterable[Any]) -> Observer:
        assert self.sandbox is not None
        return Observer(tuple(probes), self.sandbox.root, self._sink, self.stats.clock)

    def prepare(self, specs: Iterable[AttackSpec]) -> None:
        """Start, in the background, the other processes the selected attacks will need.

        They start while the primary starts or runs controls and attacks, so the
        attack that needs one does not wait for a whole process start-up: a
        second process of the target, and (over stdio, where a client's declared
        capabilities and its era are fixed for its process) the clients that declare no
        elicitation or only URL mode, and the process of the other era.
        """
        specs = list(specs)
        wanted: list[ConnectionKey] = []
        elsewhere = self.profile.is_url or self.profile.replicas >= 2  # none, or a replica serves
        if any(spec.second_process for spec in specs) and not elsewhere:
            wanted.append(ConnectionKey("other"))
        if any("declaring" in _opens(spec) for spec in specs) and self.profile.transport == "stdio":
            # Elsewhere they are clients of the primary's process (`SessionPeers.declaring`), opened at once.
            wanted += [ConnectionKey(declares="none"), ConnectionKey(declares="url")]
        if (
            any("in_era" in _opens(spec) for spec in specs)
            and self.profile.transport == "stdio"
            and self.profile.isolation != "process"
        ):
            # protocol-downgrade's other era is another process over stdio (`SessionPeers.in_era`): the
            # legacy one, unless the primary is pinned to a legacy era (then the modern one).
            pinned_legacy = self.profile.protocol in LEGACY
            era_process = PRIMARY.in_era("modern" if pinned_legacy else "legacy")
            wanted.append(era_process)
            # Its name carries no number: the processes' numbers still say in which order the
            # attacks came to need them, as they did when this one started only when needed.
            self._unnumbered.add(era_process.name)
        for key in wanted:
            if key.name not in self._live and key.name not in self._pending:
                self._start_in_background(key)

    def _start_in_background(self, key: ConnectionKey) -> None:
        pending: Future[Connection] = Future()

        def start() -> None:
            self._in_background.active = True  # beside the audit: no wall time of its own
            try:
                pending.set_result(self._ensure_now(key))
            except BaseException as exc:
                pending.set_exception(exc)

        self._pending[key.name] = pending
        threading.Thread(target=start, name=f"mcp-audit-start-{key.name}", daemon=True).start()

    def _adopt(self, name: str) -> None:
        """Wait for a connection being opened in the background; it is then live (or not)."""
        if (pending := self._pending.pop(name, None)) is not None:
            try:
                pending.result()
            except Exception as exc:  # opened again, and reported, when it is needed
                self.stats.notes.append(f"starting {name} in the background: {exc}")

    def close(self) -> None:
        with self.stats.clock.phase("stops"):
            self._close_all()

    def _close_all(self) -> None:
        for name in list(self._pending):
            self._adopt(name)
        while self._warm:
            try:
                world = self._warm.popleft().result()
            except BaseException:
                continue
            self._retire({PRIMARY.name: world.primary}, world.sandbox)
        for retiring in self._retiring:
            retiring.join()
        self._retiring.clear()
        with self._lock:
            lives, self._live = self._live, {}

        def group(root: str) -> list[_Live]:
            # Clients attached to a process close before it, as they opened after it.
            children = [n for n in reversed(list(lives)) if lives[n].parent == root]
            return [*(live for child in children for live in group(child)), lives[root]]

        def close_group(members: list[_Live]) -> None:
            for live in members:
                self._close(live)

        groups = [group(name) for name in reversed(list(lives)) if lives[name].parent is None]
        # Processes side by side: each close waits for its own process to exit.
        with ThreadPoolExecutor(max(1, len(groups)), thread_name_prefix="mcp-audit-close") as pool:
            list(pool.map(close_group, groups))
        if self._portal_cm is not None:
            self._portal_cm.__exit__(None, None, None)
            self._portal_cm = self._portal = None
        if self._zygote is not None:
            # After every process forked from it was closed: it kills whatever of them is left
            # (a kept one is left running; each of this audit's processes died with its relay).
            release_zygote(self._zygote)
            self._zygote = None
        if self.sandbox is not None:
            # Last: a descendant that scrubbed its environment still works in the sandbox.
            sandbox = self.sandbox
            reaper.kill_now(lambda: reaper.working_in(sandbox.base))
            self._keep_outside_writes(sandbox)
            self.sandbox.remove()
            self.sandbox = None
        if self._sink is not None:
            self._sink.close()
            self._sink = None

    def _ensure(
        self,
        key: ConnectionKey,
        *,
        profile: Profile | None = None,
        attach_to: ConnectionKey | None = None,
        identity: Identity | None = None,
    ) -> Connection:
        """The live connection of `key`, opened (or opened again, if lost) as needed."""
        self._adopt(key.name)
        return self._ensure_now(key, profile=profile, attach_to=attach_to, identity=identity)

    def _ensure_now(
        self,
        key: ConnectionKey,
        *,
        profile: Profile | None = None,
        attach_to: ConnectionKey | None = None,
        identity: Identity | None = None,
    ) -> Connection:
        name = key.name
        live = self._live.get(name)
        if live is not None and live.connection.alive:
            return live.connection
        if live is not None:
            self.stats.notes.append(f"{name} connection was lost; started the target again")
            self._drop(name)
        assert self._portal is not None
        assert self.sandbox is not None
        if attach_to is None:
            opened = self._open_process(key, self.sandbox, profile)
        else:
            endpoint = self._ensure(attach_to).endpoint
            era = era_of(key, self.profile.protocol)
            declares = _declared(key)
            opener = (
                attach(self.profile, endpoint, name, protocol=era, elicitation=declares)
                if identity is None
                else attach(
                    self.profile,
                    endpoint,
                    name,
                    headers=identity.headers,
                    hint=identity.hint,
                    protocol=era,
                    elicitation=declares,
                )
            )
            opened = self._enter(opener, attach_to.name)
        with self._lock:
            self._live[name] = opened
        return opened.connection

    def _open_process(self, key: ConnectionKey, sandbox: Sandbox, profile: Profile | None = None) -> _Live:
        """A new process of the target on `sandbox`, and the harness's connection to it."""
        name = key.name
        with self._lock:
            if name in self._unnumbered:
                label = name  # started ahead of need: the others keep the numbers they had without it
                self._unnumbered.discard(name)
            else:
                label = f"{name}-{self._numbered}"
                self._numbered += 1
            self.stats.processes_started += 1
        started = profile or self._started
        opener = connect_servers(
            started,
            sandbox.root,
            sandbox.logs,
            label,
            ablate=key.ablated,
            elicitation=_declared(key),
            protocol=era_of(key, self.profile.protocol),
            zygote=self._zygote_for(started, sandbox),
        )
        return self._enter(opener, None)

    def _zygote_for(self, started: Profile, sandbox: Sandbox) -> Zygote | None:
        """`zygote:`: the one parent every process of the target is forked from, started the first time."""
        if not self.profile.zygote:
            return None
        with self._zygote_lock:
            if self._zygote is not None and not self._zygote.running:
                # Gone (killed by a process of the target, say): the worlds after it need another.
                release_zygote(self._zygote)
                self._zygote = None
                self.stats.notes.append("the target's zygote exited; it was started again")
            if self._zygote is None:
                # With servers:, the first is the command; each other one is forked if it can be.
                if started.is_url or started.is_in_process or started.serves_http or started.tty:
                    raise UsageError(
                        "zygote: forks a Python target started over stdio; this one is not (a URL, py:, "
                        "{port} or tty:): remove zygote: from the profile"
                    )
                interpreter, _ = split_command(started.argv(sandbox.root))
                self._zygote = open_zygote(
                    interpreter,
                    self.profile.zygote,
                    {**os.environ, **started.env},
                    self.profile.start_timeout,
                    own_env=started.env,
                    confined=(confine.regime(started), [str(sandbox.base.parent)]),
                )
            return self._zygote

    def _enter(self, opener: AbstractAsyncContextManager[Connection], parent: str | None) -> _Live:
        assert self._portal is not None
        context = self._portal.wrap_async_context_manager(opener)
        if getattr(self._in_background, "active", False):
            connection = context.__enter__()
        else:
            with self.stats.clock.phase("starts"):
                connection = context.__enter__()
        return _Live(connection, context, parent)

    def _drop(self, name: str) -> None:
        """Close a connection and every client attached to its process."""
        with self._lock:
            children = [n for n, live in self._live.items() if live.parent == name]
        for child in children:
            self._drop(child)
        with self._lock:
            live = self._live.pop(name, None)
        if live is not None:
            self._close(live)

    def _close(self, live: _Live) -> None:
        with self._lock:
            self.stats.round_trips += live.connection.round_trips
            self.stats.tool_listings += live.connection.listings
            self.stats.in_round_trips += live.connection.waited_on
        try:
            live.context.__exit__(None, None, None)
        except Exception as exc:  # a dead target may fail to close cleanly; it is killed either way
            self.stats.notes.append(f"closing {live.connection.name}: {type(exc).__name__}: {exc}")

    async def open(
        self,
        key: ConnectionKey,
        *,
        profile: Profile | None = None,
        attach_to: ConnectionKey | None = None,
        identity: Identity | None = None,
    ) -> Connection:
        live = self._live.get(key.name)
        if live is not None and live.connection.alive and key.name not in self._pending:
            # Open already (most asks are for a connection an earlier attack opened): no thread hop.
            return live.connection
        # Opened from a worker thread through the portal, so its context lives
        # in the portal's own task rather than inside the attack's task.
        return await anyio.to_thread.run_sync(
            lambda: self._ensure(key, profile=profile, attach_to=attach_to, identity=identity)
        )

    # -- controls and attacks -------------------------------------------

    @property
    def started(self) -> Profile:
        """The profile the target's processes are started with (a short-lived one shortens its lifetime)."""
        return self._started

    def plan(self, tool: str) -> ToolPlan:
        return next(p for p in self.plans if p.name == tool)

    def prefix(self, tool: str, *, ablated: bool = False) -> ConnectionKey:
        """The connections a tool is audited over: ablated or not, and its era (a key with no role yet)."""
        return ConnectionKey(ablated=ablated, era="legacy" if tool in self._legacy_tools else None)

    def controls(self, tool: str, *, ablated: bool = False) -> ControlOutcome:
        with self.stats.clock.phase("controls"):
            return self._controls_of(tool, ablated)

    def _controls_of(self, tool: str, ablated: bool) -> ControlOutcome:
        key = (tool, ablated)
        if key not in self._controls:
            outcome = self._controls_over(tool, ablated)
            if outcome.isolation is not None and self.profile.isolation != "process":
                # The world carried over between controls: it would between attacks too.
                self.profile = replace(self.profile, isolation="process")
                self.stats.notes.append(outcome.isolation)
            if (
                not outcome.approve_ok
                and outcome.back_channel
                and self.profile.protocol == "auto"
                and tool not in self._legacy_tools
            ):
                # Zero configuration: on 2026-07-28 the tool could not ask (it asks over a back
                # channel, `ctx.elicit`), so it is audited where it can: over a legacy connection.
                self._legacy_tools.add(tool)
                legacy = self._controls_over(tool, ablated)
                if legacy.approve_ok:
                    outcome = legacy
                    self.stats.notes.append(
                        f"{tool}: asks over a back channel (elicitation/create), so it is audited over a "
                        f"legacy connection ({self._ensure(self.prefix(tool).at('primary')).era})"
                    )
                else:
                    self._legacy_tools.discard(tool)
            if not outcome.approve_ok and not ablated and self._searches(tool, outcome):
                outcome = self._search(tool, outcome)
            self._controls[key] = outcome
        return self._controls[key]

    def _searches(self, tool: str, outcome: ControlOutcome) -> bool:
        """Zero configuration, on an action that names no file, whose first call was refused (nothing acted unasked)."""
        unasked = any(result.name == UNASKED for result in outcome.results)
        zero = self.profile.args is None and not self.profile.setup
        # MRTR's first call, or a token flow's preview (called with its preview arguments), refused.
        wrong = outcome.refused_arguments and (
            outcome.mechanism is None or isinstance(outcome.mechanism, Token)
        )
        return zero and wrong and not unasked and searchable(self.plan(tool))

    def _search(self, tool: str, outcome: ControlOutcome) -> ControlOutcome:
        """The approve control failed: search for what the server wants (engine.search), then the controls again."""
        assert self._portal is not None
        plan = self.plan(tool)
        renewable = not self.profile.is_url

        async def fresh() -> tuple[Connection, Path]:
            await anyio.to_thread.run_sync(self._isolate)
            assert self.sandbox is not None
            return self._ensure(self.prefix(tool).at("primary")), self.sandbox.root

        # A token flow is searched through its preview: the call that asks, never the one that acts.
        flow = outcome.mechanism
        previewing = dict(flow.preview_args) if isinstance(flow, Token) and flow.preview_tool is None else {}
        if renewable:
            self._isolate()  # the search starts in a world no control has touched
        assert self.sandbox is not None
        conn = self._ensure(self.prefix(tool).at("primary"))
        found = self._portal.call(
            search,
            plan,
            self.tools,
            conn,
            self.sandbox.root,
            self.seen,
            fresh if renewable else None,
            previewing,
        )
        if found.plan is not None and found.plan != plan:
            self.plans = [found.plan if p.name == tool else p for p in self.plans]
            if renewable:
                self._isolate()
            outcome = self._controls_over(tool, False)
        said = ControlResult(tool, "search", found.plan is not None, True, found.describe())
        return replace(outcome, results=(*outcome.results, said), search=found)

    def _controls_over(self, tool: str, ablated: bool) -> ControlOutcome:
        assert self._portal is not None
        assert self.sandbox is not None
        prefix = self.prefix(tool, ablated=ablated)
        conn = self._ensure(prefix.at("primary"))
        sandbox, plan = self.sandbox, self.plan(tool)
        observer = self.observer((*plan.probes, *plan.candidate_probes))

        async def fresh_world() -> tuple[Connection, Sandbox]:
            await anyio.to_thread.run_sync(self._isolate)
            assert self.sandbox is not None
            return self._ensure(prefix.at("primary")), self.sandbox

        # A fresh world can be had from any target the harness starts itself (not a running URL).
        renewable = not ablated and not self.profile.is_url
        return self._portal.call(
            lambda: run_controls(
                plan,
                conn,
                sandbox,
                self.profile.answer,
                self.profile.negative_answer,
                observer=observer,
                values=self.values,
                fresh_world=fresh_world if renewable else None,
                isolated=self.profile.isolation == "process" and renewable,
                tools=self.tools,
                call_timeout=self.profile.call_timeout,
                pages=Pages(self.profile.url_elicitation, self.profile.call_timeout),
            )
        )

    def run(self, spec: AttackSpec, tool: str) -> tuple[Result, Transcript]:
        result, transcript = self._run(spec, tool, ablated=False)
        if self.ablates and result.verdict is Verdict.REFUSED and result.layer is Layer.SDK_BOUNDARY:
            result = replace(result, ablation=self._ablate(spec, tool))
        return result, transcript

    def _ablate(self, spec: AttackSpec, tool: str) -> Ablation:
        """The attack again, on the target built without its SDK boundary."""
        ablated, _ = self._run(spec, tool, ablated=True)
        return Ablation(Layer.SDK_BOUNDARY, ablated.verdict, ablated.layer, ablated.reason, ablated.evidence)

    def _run(self, spec: AttackSpec, tool: str, *, ablated: bool) -> tuple[Result, Transcript]:
        with self.stats.clock.phase("attacks"):
            return self._run_now(spec, tool, ablated=ablated)

    def _run_now(self, spec: AttackSpec, tool: str, *, ablated: bool) -> tuple[Result, Transcript]:
        assert self._portal is not None
        assert self.sandbox is not None
        outcome = self.controls(tool, ablated=ablated)
        approve = outcome.results[0]
        precondition = Precondition(outcome.approve_ok, "" if outcome.approve_ok else approve.detail)
        if not precondition.ok and not _runs_without_an_honest_flow(spec):
            transcript = Transcript(attack_id=spec.id, tool=tool, precondition=precondition)
            return judge(spec, transcript), transcript
        # The mechanism the controls proved; an MRTR family does not apply to another one.
        plan = self.plan(tool)
        prefix = self.prefix(tool, ablated=ablated)
        # The era is the connection's (the same in every world): MRTR, or elicitation over a legacy one.
        if (era := self._eras.get(prefix)) is None:
            era = self._eras[prefix] = self._ensure(prefix.at("primary")).era
        mechanism = outcome.mechanism or plan.mechanism or _asking(era, tool)
        plan = replace(plan, mechanism=mechanism)
        if (other := mrtr_only(spec.technique, mechanism)) is not None:
            transcript = Transcript(
                spec.id, tool, precondition, not_applicable=other, mechanism=mechanism.kind, era=era
            )
            return judge(spec, transcript), transcript
        if self.profile.isolation == "process" and not self._untouched:
            self._isolate()
        primary = self._ensure(prefix.at("primary"))
        peers = SessionPeers(self, prefix)
        attack = Attack(
            spec,
            plan,
            outcome.style or "relative",
            self.sandbox,
            self.sandbox.reserve_case(f"{prefix.name}{spec.id}-{spec.slug}"),
            primary,
            peers.other,
            tools=self.tools,
            answer_template=self.profile.answer,
            negative_template=self.profile.negative_answer,
            generation=self.generation,
            peers=peers,
            observer=self.observer(outcome.probes),
            bookkeeping=outcome.bookkeeping,
            values=self.values,
            pages=Pages(self.profile.url_elicitation, self.profile.call_timeout),
            gated_places=outcome.places,
            items_per_effect=outcome.items_per_effect,
        )
        attack.honest_flow_failed = precondition.reason if not precondition.ok else None
        technique = self.catalogue.techniques[spec.technique]
        budget = self.profile.call_timeout * 8 + _waited_out(self.profile, spec)
        self._portal.call(_bounded, technique, attack, spec, budget)
        self.stats.attacks_run += 1
        self.stats.waited += attack.waited
        transcript = replace(attack.transcript(precondition), signatures=outcome.signatures)
        if attack.may_be_parked:
            self._portal.call(attack.settle)
        # An attack that sent nothing (not applicable before its first request) leaves its process
        # as fresh as it found it: the next attack gets that one rather than a world of its own.
        with self._lock:
            self._untouched = not transcript.exchanges and set(self._live) == {PRIMARY.name}
        return judge(spec, transcript), transcript


def _asking(era: str, tool: str) -> Mechanism:
    """How a tool that asked in the controls asks: MRTR rounds, or elicitation/create on a legacy connection."""
    if era != MODERN:
        return Elicitation(tool, era=era)
    return Mrtr(tool)


def _waited_out(profile: Profile, spec: AttackSpec) -> float:
    """What an attack's budget adds to its round trips: a lifetime it waits out, and a round nobody answers.

    A round nobody answers (the unanswered family; a waits flow's call taken by the agent alone)
    may take the target's own deadline for its person, when the profile declares one.
    """
    found = traits_of(spec.technique)
    waits = found is not None and found.waits_lifetime
    return (profile.ttl if waits else 0.0) + (profile.answer_deadline or 0.0)


def _runs_without_an_honest_flow(spec: AttackSpec) -> bool:
    """Whether an attack's family still runs when the honest flow failed (its trait)."""
    found = traits_of(spec.technique)
    return found is not None and found.without_an_honest_flow


def _opens(spec: AttackSpec) -> frozenset[str]:
    """The peers an attack's family opens (its `opens` trait)."""
    found = traits_of(spec.technique)
    return found.opens if found is not None else frozenset()


async def _bounded(technique: Callable[..., Any], attack: Attack, spec: AttackSpec, budget: float) -> None:
    with anyio.move_on_after(budget) as scope:
        try:
            await attack.prepare()
        except SetupFailed as exc:
            attack.setup_failed(str(exc))
        else:
            try:
                await technique(attack, spec.params)
                # A refusal that offers another way to confirm is followed before the attack is judged.
                await follow_offer(attack)
            except TargetError as exc:
                # Another process (or client) of the target the attack needed would not start: the
                # target's doing, not the harness's, and the attack cannot be judged without it.
                attack.setup_failed(f"another process or client of the target could not be opened: {exc}")
    # Bounded on its own: an attack cut short still has its effect looked for.
    with anyio.move_on_after(attack.primary.call_timeout * 2):
        await attack.finish()
    if scope.cancelled_caught:
        attack.setup_failed(f"the attack did not finish within its budget of {budget:g}s")
        attack.primary.alive = False


@dataclass(frozen=True)
class AuditRun:
    """Everything one programmatic audit produced: what the CLI and tests consume."""

    results: tuple[Result, ...]
    controls: tuple[ControlResult, ...]
    processes_started: int
    round_trips: int = 0
    tool_listings: int = 0
    left_out: tuple[str, ...] = ()

    def by_id(self) -> dict[str, Result]:
        return {r.id: r for r in self.results}


def run_audit(
    profile: Profile,
    *,
    catalogue: Catalogue | None = None,
    select: Callable[[AttackSpec], bool] | None = None,
    generation: Generation | None = None,
) -> AuditRun:
    """Audit a target without pytest: controls, then every selected attack on every tool."""
    catalogue = catalogue or load_catalogue()
    selected = [spec for spec in catalogue.active if select is None or select(spec)]
    session = AuditSession(profile, catalogue, generation)
    session.start(selected)
    try:
        results: list[Result] = []
        controls: list[ControlResult] = []
        for plan in session.plans:
            controls.extend(session.controls(plan.name).results)
            for spec in selected:
                results.append(session.run(spec, plan.name)[0])
    finally:
        session.close()
    stats = session.stats
    return AuditRun(
        tuple(results),
        tuple(controls),
        stats.processes_started,
        stats.round_trips,
        stats.tool_listings,
        tuple(session.left_out),
    )
