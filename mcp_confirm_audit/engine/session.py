"""One audit of one target: the process(es), the sandbox, controls, attacks.

The SDK client is async; pytest items are not. One event loop lives for the
whole session, run by pytest's thread each time an item waits on it, so the
target is started once and every item drives it through the same connection. Other
connections (another process, replicas, more clients of the same process, a
short-lived process, the target without its SDK boundary) are opened the first
time an attack asks for one, and kept.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from ..catalogue.generation import Generation, generation_for
from ..catalogue.loader import Catalogue, load_catalogue
from ..channels.url_flow import Pages
from ..confirmations import as_flow
from ..confirmations.base import Mechanism
from ..confirmations.detect import declining_tools, policy_tools
from ..confirmations.elicitation import LEGACY, MODERN, Elicitation
from ..confirmations.mrtr import Mrtr
from ..confirmations.pending import Pending
from ..confirmations.token import Token
from ..errors import TargetError
from ..models import (
    SEARCH,
    UNASKED,
    Ablation,
    AttackSpec,
    ControlResult,
    Layer,
    Outcome,
    Precondition,
    Result,
    Transcript,
    Verdict,
)
from ..oracle.effects import ProbeSpec, is_ignored
from ..oracle.sandbox import Sandbox
from ..profile.loader import Profile
from ..target import confine
from ..target.discovery import ToolPlan, look_around, plan_tools
from ..target.driver import STDERR_SAID, Connection, ToolInfo, deadline_in
from ..techniques import mrtr_only, traits_of
from ..techniques._era_control import EraControl
from ..techniques._offers import follow_offer
from ..techniques.base import Attack
from . import makers
from .action import SetupFailed, not_again
from .classify import classify
from .connection_key import PRIMARY, ConnectionKey
from .controls import ControlOutcome, run_controls
from .observation import Observer, Serving
from .peers import SessionPeers
from .reading import literal
from .search import search, searchable
from .verdict import judge
from .world import Stats, World


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
        # Whether the target serves requests while its question is open: learned once, by the first probe.
        self.serving = Serving()
        self.tools: list[ToolInfo] = []
        self.plans: list[ToolPlan] = []
        # Zero configuration: the tools not audited, each with why ("delete_all: did not ask, ...").
        self.left_out: list[str] = []
        self.server_info: dict[str, Any] = {}
        # How the target's processes are confined (target/confine.py): the report's regime line.
        self.regime = confine.regime(profile)
        # The target's processes and the sandbox they run on (engine/world.py).
        self.world = World(profile, self.stats, shared_net=self.regime.shared)
        self._controls: dict[tuple[str, bool], ControlOutcome] = {}
        # What zero configuration's look around returned, by tool (the honest-flow search reads it too).
        self.seen: dict[str, Any] = {}
        # Tools audited over a legacy connection although the primary negotiated 2026-07-28:
        # they ask over a back channel (`protocol: auto` found it from what they did).
        self._legacy_tools: set[str] = set()
        # The era each family of connections (by name prefix) negotiated.
        self._eras: dict[ConnectionKey, str] = {}
        # Each tool's honest flow over the era other than its primary's (by tool, ablated; then era):
        # the first protocol-downgrade attack runs it, the others read it.
        self._era_controls: dict[tuple[str, bool], dict[str, EraControl]] = {}
        # What a family learned of each tool in the world in place (by tool, ablated; then family): its first
        # attack learns it (chained-command's allow-list), the others read it; a fresh world forgets it.
        self._learned: dict[tuple[str, bool], dict[str, Any]] = {}
        # Whether this session holds the collector's older objects aside (`_Collector`).
        self._held = False
        # Tools whose every attack gets a fresh world of its own (engine/makers): they act on whatever waits.
        self._fresh_for: set[str] = set()
        # When the target last stopped answering in an attack (its connection lost): which attack, and the
        # last request it answered; None while every attack since found it answering.
        self._down_since: str | None = None
        # Each tool's plan with its proven mechanism, by tool: the plan, the mechanism, the two together.
        self._planned: dict[str, tuple[ToolPlan, Mechanism, ToolPlan]] = {}
        self.world.when_fresh(self._forget_the_old_world)

    def _forget_the_old_world(self) -> None:
        """A fresh world began: what each flow kept of its previews (a change id) names nothing in it.

        Every flow the session knows: each plan's, and each one its controls proved (zero
        configuration's detected flows). The controls forget their own as they take a fresh world.
        What the families learned of a tool goes too: a new process may let through what the old
        one asked about, or the reverse (an approval it remembered for its session is gone).
        """
        for learned in self._learned.values():
            learned.clear()  # in place: an attack's peers hold the dictionary itself
        known = [plan.mechanism for plan in self.plans]
        known += [outcome.mechanism for outcome in self._controls.values()]
        for mechanism in known:
            if (flow := as_flow(mechanism)) is not None:
                flow.forget()

    @property
    def sandbox(self) -> Sandbox | None:
        """The sandbox of the world in place."""
        return self.world.sandbox

    @property
    def values(self) -> dict[str, Any]:
        """What {root}, {sink} (and other harness-provided names) stand for in templates."""
        return self.world.values

    @property
    def outside_writes(self) -> list[dict[str, Any]]:
        """Files the confined target wrote outside its root (known once its sandboxes are removed)."""
        return self.world.outside_writes

    @property
    def ablates(self) -> bool:
        """Attacks refused by the SDK boundary run again without it: in-process targets only."""
        return self.profile.is_in_process and self.profile.ablation

    # -- lifetime -----------------------------------------------------------

    def start(self, specs: Iterable[AttackSpec] = ()) -> None:
        """Start the target; also, side by side, a second process if `specs` will need one."""
        if not self._held:
            _collector.hold()
            self._held = True
        with self.stats.clock.phase("starts"):
            self._start(specs)

    def _start(self, specs: Iterable[AttackSpec]) -> None:
        try:
            self.world.begin()
            specs = list(specs)
            self.prepare(specs)
            primary = self.world.ensure(PRIMARY)
            self.tools = self.world.call(primary.list_tools)
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
                classified = self.world.call(classify, primary, self.tools, self.sandbox.root)
                self.tools, logs, readers = list(classified.tools), classified.bookkeeping, classified.notes
            seen = self.seen = self.world.call(look_around, primary, self.tools, self.profile)
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
                self._drop_inert({line.split(": ", 1)[0] for line in readers})
            self.left_out = [*readers, *self.left_out]
            if specs:
                self.expect(len(specs) * len(self.plans))
        except BaseException:
            self.close()
            raise

    def _drop_inert(self, found_reading: Collection[str] = ()) -> None:
        """Zero configuration: a tool that neither asks, acts nor refuses is no gate; leave it out.

        Nor is a step of another tool's proven flow (a pending action's approve or execute
        tool) or a policy tool, when it is no gate of its own: the families of the gated tool
        judge it (self-approval, token-replay, policy-self-loosening).
        """
        self._shared_bookkeeping()
        inert = [plan.name for plan in self.plans if self.controls(plan.name).inert]
        steps = self._flow_steps()
        self.plans = [plan for plan in self.plans if plan.name not in inert and plan.name not in steps]
        # A step of a flow says what it is, proven or not: it never also "did not ask" (its own control sent
        # it the harness's values, an approve step `approve: false`, which moves nothing by design).
        unproven = self._unproven_steps()
        self.left_out = [
            f"{name}: {unproven.get(name, 'did not ask, and showed no effect')}"
            for name in inert
            if name not in steps
        ]
        self.left_out += [f"{name}: {role}" for name, role in steps.items()]
        if not self.plans:
            offered = ", ".join(sorted(t.name for t in self.tools)) or "none"
            # Declared so by its annotations, or shown so by calling it (it declared nothing).
            read_only = [t.name for t in self.tools if t.read_only is True and t.name not in found_reading]
            why = [f"{', '.join(read_only)} declared read-only"] if read_only else []
            if found_reading:
                why.append(f"{', '.join(sorted(found_reading))} changed nothing when called (no annotations)")
            if inert:
                why.append(f"{', '.join(inert)} did not ask for confirmation and showed no effect")
            raise TargetError(
                f"the target offers no tool to audit (tools: {offered}): {'; '.join(why)}; name one in a "
                "profile with 'tool:' (and 'args:', 'path_arg:' or 'effect:' as it needs)"
            )

    def _shared_bookkeeping(self) -> None:
        """Zero configuration: what one tool's controls learned is the target's bookkeeping, for every tool.

        A file that moved while the harness only looked, on a round that only asked, in a declined
        control or on a call the target refused (an evidence log's write-ahead file) moves on every
        call. A tool whose approve control failed only because such a file moved on its first call
        ("acted without asking") has its controls run again with it ignored, and named.
        """
        outcomes = {plan.name: self.controls(plan.name) for plan in self.plans}
        for plan in list(self.plans):
            acted_on = outcomes[plan.name].acted_on
            learned = {
                name: f"{why} ({other}'s controls)"
                for other, outcome in outcomes.items()
                if other != plan.name
                for name, why in (note.split(": ", 1) for note in outcome.bookkeeping_notes)
            }
            if not acted_on or not all(is_ignored(path, learned) for path in acted_on):
                continue
            renewed = replace(
                plan,
                ignore=(*plan.ignore, *learned),
                bookkeeping_notes=(*plan.bookkeeping_notes, *learned.items()),
            )
            self.plans = [renewed if p.name == plan.name else p for p in self.plans]
            self._controls.pop((plan.name, False), None)
            self.controls(plan.name)

    def _unproven_steps(self) -> dict[str, str]:
        """The approve and execute tools of pending flows found whose honest flow did not complete."""
        steps: dict[str, str] = {}
        for plan in self.plans:
            outcome = self.controls(plan.name)
            if isinstance(outcome.mechanism, Pending) and not outcome.approve_ok:
                for tool in outcome.mechanism.own_tools:
                    if tool != plan.name:
                        steps.setdefault(
                            tool,
                            f"a step of {plan.name}'s pending flow, which did not complete (its control says why)",
                        )
        return steps

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
            if isinstance(mechanism, Pending):
                for tool in declining_tools(self.tools, mechanism):
                    steps.setdefault(
                        tool, f"the decline step of {plan.name}'s pending flow (on the person's no)"
                    )
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

    def close(self) -> None:
        """Every connection closed, every process reaped, every sandbox removed (`World.close`)."""
        try:
            self.world.close()
        finally:
            if self._held:
                self._held = False
                _collector.release()

    def observer(self, probes: Iterable[Any]) -> Observer:
        assert self.sandbox is not None
        return Observer(tuple(probes), self.sandbox.root, self.world.sink, self.stats.clock, self.serving)

    def expect(self, attacks: int) -> None:
        """How many attacks this session will run (when known): worlds are not started for nothing."""
        self.world.expect(attacks)

    def prepare(self, specs: Iterable[AttackSpec]) -> None:
        """Start, in the background, the other processes the selected attacks will need.

        They start while the primary starts or runs controls and attacks, so the
        attack that needs one does not wait for a whole process start-up: a
        second process of the target, and (over stdio, where a client's declared
        capabilities and its era are fixed for its process) the clients that declare no
        elicitation or only URL mode, the process of the other era, the other replicas and the
        short-lived process (a shorter lifetime of its confirmations).
        """
        specs = list(specs)
        wanted: list[ConnectionKey] = []
        unnumbered: list[str] = []
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
            unnumbered.append(era_process.name)
        profiles: dict[str, Profile] = {}
        if not self.profile.is_url and self.profile.isolation != "process":
            # Named without a number as well: started side by side, their numbers would be a race's.
            if self.profile.replicas >= 2 and any(
                spec.second_process or "replicas" in _opens(spec) for spec in specs
            ):
                replicas = [ConnectionKey(f"replica-{i}") for i in range(1, self.profile.replicas)]
                wanted += replicas
                unnumbered += [key.name for key in replicas]
            if self.profile.ttl_flag and any("short_lived" in _opens(spec) for spec in specs):
                short = ConnectionKey("short-lived")
                wanted.append(short)
                unnumbered.append(short.name)
                profiles[short.name] = self.world.started.with_ttl()
        self.world.start_ahead(wanted, unnumbered=unnumbered, profiles=profiles)

    # -- controls and attacks -------------------------------------------

    @property
    def started(self) -> Profile:
        """The profile the target's processes are started with (a short-lived one shortens its lifetime)."""
        return self.world.started

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
            # Controls answer at the profile's pace; one they learn is the tool's (engine/pace).
            self.world.pace(None)
            outcome = self._controls_over(tool, ablated)
            if not outcome.approve_ok and not ablated:
                outcome = self._without_command_action(tool, outcome)
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
                        f"legacy connection ({self.world.ensure(self.prefix(tool).at('primary')).era})"
                    )
                elif legacy.too_soon:
                    # It asked there, and refused every yes as too soon: that is why, not the back channel.
                    outcome = legacy
                else:
                    self._legacy_tools.discard(tool)
            if not outcome.approve_ok and not ablated and self._searches(tool, outcome):
                outcome = self._search(tool, outcome)
            if not ablated and self._wants_a_maker(tool, outcome):
                outcome = self._with_a_maker(tool, outcome)
            if not outcome.approve_ok:
                outcome = self._with_the_target_stderr(tool, ablated, outcome)
            if outcome.changed_the_target and not self.profile.is_url:
                # It acted unasked on the target's own state (host-terminal-mcp's `set_permission_mode`
                # switched the gate to another mode): every control and attack after it would run on a
                # target that call changed. They start in a world of their own.
                self.world.isolate()
                self.stats.notes.append(
                    f"{tool}: acted unasked on the target's own state ({', '.join(outcome.changed_the_target[:3])}): "
                    "what runs after its control starts on a fresh target"
                )
            self._controls[key] = outcome
        return self._controls[key]

    def _without_command_action(self, tool: str, outcome: ControlOutcome) -> ControlOutcome:
        """Zero configuration: `rm` of the case file through a command line moved nothing; the line as filler.

        A tool whose `command` is no shell's (a controller's `vent north 30`) runs what it is given
        its own way: its effect is where a value action's shows, as before the line was `rm`.
        """
        plan = self.plan(tool)
        alone = plan.without_command_action
        if alone is None or self.profile.is_url:
            return outcome
        # The action as zero configuration would have called it; what the session added since (the probes,
        # the bookkeeping learned) kept.
        kept = ("path_arg", "extra_args", "path_styles", "setup", "template", "notes", "mechanism")
        instead = replace(
            plan, **{name: getattr(alone, name) for name in kept}, path_quoted=False, path_in_command=False
        )
        self.plans = [
            replace(instead, without_command_action=None) if p.name == tool else p for p in self.plans
        ]
        # Whether it completes or not: a tool no shell stands behind is judged as one that takes a value
        # (an approve step's `command` is the handle of another tool's flow, never a line of its own).
        return self._controls_over(tool, False)

    def _with_the_target_stderr(self, tool: str, ablated: bool, outcome: ControlOutcome) -> ControlOutcome:
        """A failed approve control with how the target's stderr ended, where it has one: often the only why.

        A tool that raised is answered `Error executing tool <name>` by the SDK, which logs the cause on
        the target's stderr; that log goes with the sandbox when the audit ends, and every attack the
        failure leaves inconclusive quotes this detail. A round trip that lost the connection says it already.
        """
        approve = outcome.results[0] if outcome.results else None
        if approve is None or approve.name != "approve" or STDERR_SAID in approve.detail:
            return outcome
        tail = self.world.stderr_tail(self.prefix(tool, ablated=ablated).at("primary"))
        if not tail:
            return outcome
        said = replace(approve, detail=f"{approve.detail}{STDERR_SAID}{tail}")
        return replace(outcome, results=(said, *outcome.results[1:]))

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
        plan = self.plan(tool)
        renewable = not self.profile.is_url

        async def fresh() -> tuple[Connection, Path]:
            await anyio.to_thread.run_sync(self.world.isolate)
            assert self.sandbox is not None
            return self.world.ensure(self.prefix(tool).at("primary")), self.sandbox.root

        # A token flow is searched through its preview: the call that asks, never the one that acts.
        flow = outcome.mechanism
        previewing = dict(flow.preview_args) if isinstance(flow, Token) and flow.preview_tool is None else {}
        if renewable:
            self.world.isolate()  # the search starts in a world no control has touched
        assert self.sandbox is not None
        conn = self.world.ensure(self.prefix(tool).at("primary"))
        found = self.world.call(
            search,
            plan,
            self.tools,
            conn,
            self.sandbox.root,
            self.seen,
            fresh if renewable else None,
            previewing,
            flow.preview_tool if isinstance(flow, Token) else None,
        )
        if found.plan is not None and found.plan != plan:
            self.plans = [found.plan if p.name == tool else p for p in self.plans]
            if renewable:
                self.world.isolate()
            outcome = self._controls_over(tool, False)
        said = ControlResult(tool, SEARCH, found.plan is not None, True, found.describe())
        return replace(outcome, results=(*outcome.results, said), search=found)

    def _wants_a_maker(self, tool: str, outcome: ControlOutcome) -> bool:
        """Zero configuration, on an action with no setup that found nothing to ask about (engine.makers)."""
        zero = self.profile.args is None and not self.profile.setup and not self.profile.is_url
        plan = self.plan(tool)
        return zero and not plan.setup and searchable(plan) and makers.wants_a_subject(outcome)

    def _with_a_maker(self, tool: str, outcome: ControlOutcome) -> ControlOutcome:
        """Each tool that may make the action's subject, as its setup in a fresh world, until every control asks."""
        plan = self.plan(tool)
        for maker in makers.candidates(plan, self.tools):
            step = makers.setup_call(maker, self.plans, self.seen)
            said = makers.learned(tool, maker.name, outcome)
            trial = replace(plan, setup=(step,), notes=(*plan.notes, said))
            self.plans = [trial if p.name == tool else p for p in self.plans]
            self.world.isolate()  # a world no control touched: the maker alone leaves something waiting
            again = self._controls_over(tool, False)
            if again.approve_ok and not makers.wants_a_subject(again):
                found = [ControlResult(tool, "maker", True, True, said)]
                if self.profile.isolation != "process":
                    # The action takes whatever waits: another attack's leftovers would be part of its subject.
                    self._fresh_for.add(tool)
                    found.append(
                        ControlResult(tool, "isolation", True, True, makers.isolated(tool, maker.name))
                    )
                return replace(again, results=(*again.results, *found))
        self.plans = [plan if p.name == tool else p for p in self.plans]
        return outcome

    def _controls_over(self, tool: str, ablated: bool) -> ControlOutcome:
        assert self.sandbox is not None
        prefix = self.prefix(tool, ablated=ablated)
        conn = self.world.ensure(prefix.at("primary"))
        sandbox, plan = self.sandbox, self.plan(tool)
        observer = self.observer((*plan.probes, *plan.candidate_probes))

        async def fresh_world() -> tuple[Connection, Sandbox]:
            await anyio.to_thread.run_sync(self.world.isolate)
            assert self.sandbox is not None
            return self.world.ensure(prefix.at("primary")), self.sandbox

        # A fresh world can be had from any target the harness starts itself (not a running URL).
        renewable = not ablated and not self.profile.is_url
        return self.world.call(
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

    def _proven(self, plan: ToolPlan, mechanism: Mechanism) -> ToolPlan:
        """`plan` with the mechanism its controls proved: made once per plan, not once per attack.

        Both are frozen values; a plan replaced since (a search, a maker) is made again.
        """
        made = self._planned.get(plan.name)
        if made is None or made[0] is not plan or made[1] != mechanism:
            made = self._planned[plan.name] = (plan, mechanism, replace(plan, mechanism=mechanism))
        return made[2]

    def _run_now(self, spec: AttackSpec, tool: str, *, ablated: bool) -> tuple[Result, Transcript]:
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
            era = self._eras[prefix] = self.world.ensure(prefix.at("primary")).era
        mechanism = outcome.mechanism or plan.mechanism or _asking(era, tool)
        plan = self._proven(plan, mechanism)
        if (other := mrtr_only(spec.technique, mechanism)) is not None:
            transcript = Transcript(
                spec.id, tool, precondition, not_applicable=other, mechanism=mechanism.kind, era=era
            )
            return judge(spec, transcript), transcript
        if self.profile.isolation == "process" or tool in self._fresh_for:
            self.world.fresh()
        # Every answer of the attack at the pace the controls learned for this tool, if they did.
        self.world.pace(outcome.pace)
        try:
            primary = self.world.ensure(prefix.at("primary"))
        except TargetError as exc:
            if self._down_since is None:
                raise
            # It served this audit, then stopped answering, and no longer starts on its root: what an
            # earlier request did to it (a ledger it cannot read back) outlives its process.
            transcript = Transcript(
                spec.id,
                tool,
                precondition,
                setup_failure=f"the target no longer starts on this root ({exc}); {self._down_since}",
                mechanism=mechanism.kind,
                era=era,
            )
            return judge(spec, transcript), transcript
        peers = SessionPeers(
            self.world,
            self.profile,
            prefix,
            self._era_controls.setdefault((tool, ablated), {}),
            self._learned.setdefault((tool, ablated), {}),
        )
        attack = Attack(
            spec,
            plan,
            # No style proven (an attack that runs without an honest flow): the plan's own first, so an
            # action that names no file is never sent a case file's path.
            outcome.style or plan.path_styles[0],
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
            gated_reworded=outcome.reworded,
            items_per_effect=outcome.items_per_effect,
        )
        attack.honest_flow_failed = precondition.reason if not precondition.ok else None
        technique = self.catalogue.techniques[spec.technique]
        budget = self.profile.call_timeout * 8 + _waited_out(self.profile, spec)
        transcript_of = partial(
            attack.transcript, precondition, signatures=outcome.signatures, upstream=self.profile.upstream
        )
        transcript = self._down_or_up(
            self.world.call(_attacked, technique, attack, spec, budget, transcript_of)
        )
        self.stats.attacks_run += 1
        self.stats.waited += attack.waited
        # An attack that sent nothing (not applicable before its first request) leaves its process
        # as fresh as it found it: the next attack gets that one rather than a world of its own.
        self.world.untouched(sent=bool(transcript.exchanges))
        return judge(spec, transcript), transcript

    def _down_or_up(self, transcript: Transcript) -> Transcript:
        """The transcript, with a note when the target has not answered since an earlier attack.

        A target that stops answering after a request (a crash, a ledger it cannot read back) is
        started again on the same root; one that stays down leaves every later attack inconclusive,
        and each then says since when, and after which request, rather than only "Connection closed".
        """
        lost = [i for i, e in enumerate(transcript.exchanges) if e.response.outcome is Outcome.TRANSPORT]
        if not lost:
            if transcript.exchanges:
                self._down_since = None  # it answers again
            return transcript
        if self._down_since is not None and lost[0] == 0:
            return replace(transcript, notes=(*transcript.notes, f"not answering at all: {self._down_since}"))
        answered = [e for e in transcript.exchanges[: lost[0]] if e.response.outcome is not Outcome.TRANSPORT]
        said = literal(answered[-1].request) if answered else ""
        said = said if len(said) <= 300 else f"{said[:300]}… ({len(said)} characters)"
        last = f", the last request it answered {said}" if answered else ""
        self._down_since = f"{STOPPED_ANSWERING}{transcript.attack_id}{last}"
        return transcript


# How a result says the target stopped answering in an earlier attack and stayed down (the headline counts them).
STOPPED_ANSWERING = "the target stopped answering during "


class _Collector:
    """The garbage collector set for an audit while one runs, and given back as it was after the last.

    Two settings, both undone when the last session closes, so a test process keeps its collector
    as it was. Nothing is disabled: what the audit allocates is collected as before.

    - The objects alive when the first session starts are set aside (`gc.freeze`). An in-process
      audit allocates enough for the collector to make a full pass every few audits, and a full
      pass walks every object the imports made (the SDK, pydantic's schemas, pytest's): about a
      third of the collector's time in an audit.
    - The youngest generation is collected every `_YOUNG` allocations, not every 700 (CPython's
      default). An attack allocates tens of thousands of short-lived objects (requests, replies,
      pydantic models, transcripts); at 700 the collector walked the survivors of each few hundred
      again and again. Measured on the in-process audit of the careful reference server, audits
      alternating with the two settings: 4% less wall time (0.398 s to 0.381 s, three runs of twelve
      pairs). What waits longer for collection is cyclic garbage only (a few MB at most); anything
      else is freed when its last reference goes, as before.
    """

    _YOUNG = 50_000

    def __init__(self) -> None:
        self._sessions = 0
        self._threshold: tuple[int, int, int] | None = None

    def hold(self) -> None:
        if self._sessions == 0:
            gc.freeze()
            self._threshold = young, older, oldest = gc.get_threshold()
            if young:  # 0: collection is off already, and stays so
                gc.set_threshold(max(young, self._YOUNG), older, oldest)
        self._sessions += 1

    def release(self) -> None:
        self._sessions = max(self._sessions - 1, 0)
        if self._sessions == 0:
            gc.unfreeze()
            if self._threshold is not None:
                gc.set_threshold(*self._threshold)
                self._threshold = None


_collector = _Collector()


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


async def _attacked(
    technique: Callable[..., Any],
    attack: Attack,
    spec: AttackSpec,
    budget: float,
    transcript_of: Callable[[], Transcript],
) -> Transcript:
    """One attack in one hop to the loop: run within its budget, its transcript taken, then settled.

    A call the attack left parked at a legacy question is cancelled by the person only after the
    transcript is taken: what the cancel does is not this attack's to judge.
    """
    await _bounded(technique, attack, spec, budget)
    transcript = transcript_of()
    if attack.may_be_parked:
        await attack.settle()
    return transcript


async def _bounded(technique: Callable[..., Any], attack: Attack, spec: AttackSpec, budget: float) -> None:
    with deadline_in(budget) as scope:
        try:
            await attack.prepare()
        except SetupFailed as exc:
            # Past a passed approve control, the same setup had worked: its args are not what failed.
            attack.setup_failed(
                str(exc)
                if attack.honest_flow_failed is not None
                else not_again(exc, "again for this attack", "or exclude: the attacks it cannot set up")
            )
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
    with deadline_in(attack.primary.call_timeout * 2):
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
