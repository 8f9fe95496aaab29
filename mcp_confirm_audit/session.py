"""One audit of one target: the process(es), the sandbox, controls, attacks.

The SDK client is async; pytest items are not. A blocking portal runs one
event loop in a background thread for the whole session, so the target is
started once and every item drives it through the same connection.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from . import reaper
from .catalogue import Catalogue, load_catalogue
from .controls import ControlOutcome, run_controls
from .discovery import ToolPlan, plan_tools
from .driver import Connection, ToolInfo, connect
from .generation import Generation, generation_for
from .models import AttackSpec, ControlResult, Precondition, Result, Transcript
from .profile import Profile
from .sandbox import Sandbox
from .techniques.base import Attack
from .verdict import judge


@dataclass
class _Live:
    connection: Connection
    context: AbstractContextManager[Connection]


@dataclass
class Stats:
    processes_started: int = 0
    attacks_run: int = 0
    # Requests sent, over every connection closed so far (tools/list included).
    round_trips: int = 0
    tool_listings: int = 0
    notes: list[str] = field(default_factory=list)


class AuditSession:
    def __init__(self, profile: Profile, catalogue: Catalogue, generation: Generation | None = None) -> None:
        self.profile = profile
        self.catalogue = catalogue
        self.generation = generation or generation_for(None, None, os.environ)
        self.stats = Stats()
        self.sandbox: Sandbox | None = None
        self.tools: list[ToolInfo] = []
        self.plans: list[ToolPlan] = []
        self.server_info: dict[str, Any] = {}
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: BlockingPortal | None = None
        self._primary: _Live | None = None
        self._other: _Live | None = None
        self._pending_other: Future[_Live] | None = None
        self._lock = threading.Lock()
        self._controls: dict[str, ControlOutcome] = {}

    # -- lifetime -----------------------------------------------------------

    def start(self, specs: Iterable[AttackSpec] = ()) -> None:
        """Start the target; also, side by side, a second process if `specs` will need one."""
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self.sandbox = Sandbox()
        try:
            self.prepare(specs)
            self._primary = self._open("primary")
            self.tools = self._portal.call(self._primary.connection.list_tools)
            session = self._primary.connection.client.session
            info = getattr(session, "server_info", None) or getattr(
                getattr(session, "discover_result", None), "server_info", None
            )
            if info is not None:
                self.server_info = {"name": info.name, "version": info.version}
            self.plans = plan_tools(self.tools, self.profile)
        except BaseException:
            self.close()
            raise

    def prepare(self, specs: Iterable[AttackSpec]) -> None:
        """Start, in the background, the second process the selected attacks will need.

        It starts while the primary runs controls and attacks, so the attack
        that needs it does not wait for a whole process start-up.
        """
        started = self._other is not None or self._pending_other is not None
        if started or not any(spec.second_process for spec in specs):
            return
        pending: Future[_Live] = Future()

        def start_other() -> None:
            try:
                pending.set_result(self._open("other"))
            except BaseException as exc:
                pending.set_exception(exc)

        self._pending_other = pending
        threading.Thread(target=start_other, name="mcp-audit-start-other", daemon=True).start()

    def _adopt_pending_other(self) -> None:
        pending, self._pending_other = self._pending_other, None
        if pending is not None:
            try:
                self._other = pending.result()
            except Exception as exc:  # started again, and reported, when it is needed
                self.stats.notes.append(f"starting a second process in the background: {exc}")

    def close(self) -> None:
        self._adopt_pending_other()
        lives = [live for live in (self._other, self._primary) if live is not None]
        # Side by side: each close waits for its own process to exit.
        with ThreadPoolExecutor(max_workers=max(1, len(lives)), thread_name_prefix="mcp-audit-close") as pool:
            list(pool.map(self._close, lives))
        self._other = self._primary = None
        if self._portal_cm is not None:
            self._portal_cm.__exit__(None, None, None)
            self._portal_cm = self._portal = None
        if self.sandbox is not None:
            # Last: a descendant that scrubbed its environment still works in the sandbox.
            sandbox = self.sandbox
            reaper.kill_now(lambda: reaper.working_in(sandbox.base))
            self.sandbox.remove()
            self.sandbox = None

    def _open(self, name: str) -> _Live:
        assert self._portal is not None and self.sandbox is not None
        context = self._portal.wrap_async_context_manager(
            connect(self.profile, self.sandbox.root, self.sandbox.logs, f"{name}-{self.stats.processes_started}")
        )
        connection = context.__enter__()
        with self._lock:
            self.stats.processes_started += 1
        return _Live(connection, context)

    def _close(self, live: _Live) -> None:
        with self._lock:
            self.stats.round_trips += live.connection.round_trips
            self.stats.tool_listings += live.connection.listings
        try:
            live.context.__exit__(None, None, None)
        except Exception as exc:  # a dead target may fail to close cleanly; it is killed either way
            self.stats.notes.append(f"closing {live.connection.name}: {type(exc).__name__}: {exc}")

    def _alive(self, live: _Live | None, name: str) -> _Live:
        if live is not None and live.connection.alive:
            return live
        if live is not None:
            self.stats.notes.append(f"{name} connection was lost; started the target again")
            self._close(live)
        return self._open(name)

    # -- controls and attacks -------------------------------------------

    def plan(self, tool: str) -> ToolPlan:
        return next(p for p in self.plans if p.name == tool)

    def controls(self, tool: str) -> ControlOutcome:
        if tool not in self._controls:
            assert self._portal is not None and self.sandbox is not None
            self._primary = self._alive(self._primary, "primary")
            conn, sandbox, plan = self._primary.connection, self.sandbox, self.plan(tool)
            self._controls[tool] = self._portal.call(
                lambda: run_controls(plan, conn, sandbox, self.profile.answer, self.profile.negative_answer)
            )
        return self._controls[tool]

    def run(self, spec: AttackSpec, tool: str) -> tuple[Result, Transcript]:
        assert self._portal is not None and self.sandbox is not None
        outcome = self.controls(tool)
        approve = outcome.results[0]
        precondition = Precondition(outcome.approve_ok, "" if outcome.approve_ok else approve.detail)
        if not precondition.ok:
            transcript = Transcript(attack_id=spec.id, tool=tool, precondition=precondition)
            return judge(spec, transcript), transcript
        self._primary = self._alive(self._primary, "primary")
        attack = Attack(
            spec,
            self.plan(tool),
            outcome.style or "relative",
            self.sandbox,
            self.sandbox.new_case(f"{spec.id}-{spec.slug}"),
            self._primary.connection,
            self._other_connection,
            tools=self.tools,
            answer_template=self.profile.answer,
            negative_template=self.profile.negative_answer,
            generation=self.generation,
        )
        technique = self.catalogue.techniques[spec.technique]
        budget = self.profile.call_timeout * 8
        self._portal.call(_bounded, technique, attack, spec, budget)
        self.stats.attacks_run += 1
        transcript = attack.transcript(precondition)
        return judge(spec, transcript), transcript

    async def _other_connection(self) -> Connection:
        # Opened from a worker thread through the portal, so its context lives
        # in the portal's own task rather than inside this attack's task.
        def ensure() -> Connection:
            self._adopt_pending_other()
            self._other = self._alive(self._other, "other")
            return self._other.connection

        return await anyio.to_thread.run_sync(ensure)


async def _bounded(technique: Callable[..., Any], attack: Attack, spec: AttackSpec, budget: float) -> None:
    with anyio.move_on_after(budget) as scope:
        await technique(attack, spec.params)
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
        tuple(results), tuple(controls), stats.processes_started, stats.round_trips, stats.tool_listings
    )
