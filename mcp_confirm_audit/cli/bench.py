"""`mcp-confirm-audit bench`: the audit's cost, against the floor it cannot go below.

The floor is a bare SDK client that starts the same server the same way and
sends the audit's own requests again (the same tools/list calls, then every
tools/call the audit sent, as it sent it, to the server it went to, those the
audit had in flight together sent together), and nothing else: no sandbox, no
controls, no oracle, no verdicts. The files those requests name are made before
its clock starts, so the server works on them as it did in the audit. Both are timed in one run, alternating, on the same
machine; the medians are printed with their ratio, the server processes the
audit started and its round trips.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import Client, types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from ..catalogue.loader import Catalogue, load_catalogue
from ..engine.session import AuditSession
from ..errors import TargetError, UsageError
from ..models import AttackSpec, ControlResult, Result
from ..oracle.sandbox import scratch_directory
from ..profile.loader import Profile, load_profile, resolve_profile
from ..report import build_report, write_reports
from ..target import reaper
from ..target.discovery import ToolPlan
from ..target.driver import _RAW_RESULT, Sent, _build_in_process, _RawToolCall

_NOT_A_URL = "bench starts the server itself: give a command or py:module:factory, not a URL"


@dataclass(frozen=True)
class AuditCost:
    seconds: float
    attacks: int
    processes_started: int
    second_process_attacks: int
    tool_listings: int
    tool_calls: int
    plan: ToolPlan
    # Seconds the attacks let pass by design (an expiry's lifetime): the floor waits as long.
    waited: float = 0.0
    # Wall time by phase (engine.phases.PHASES), each second counted once.
    phases: Mapping[str, float] = field(default_factory=dict)
    # CPU seconds (user and system) of this process: the whole audit for an in-process target.
    cpu: float = 0.0
    # Wall seconds the audit waited on its own tools/call requests: what its round trips cost the
    # target and the client, whatever they carried. The rest of `seconds` is the harness's own work.
    in_round_trips: float = 0.0
    # Every tools/call the audit sent, in order, and the sandbox folder its paths are under: the floor's.
    sent: tuple[Sent, ...] = ()
    sandbox: str = ""


@dataclass(frozen=True)
class BenchResult:
    audit: tuple[float, ...]
    floor: tuple[float, ...]  # one server process
    # As many server processes as the audit started (empty when that is one).
    floor_same_processes: tuple[float, ...]
    cost: AuditCost
    # The median run's phases (the run whose time is the median).
    phases: Mapping[str, float] = field(default_factory=dict)
    # --growth: (attacks, seconds) with the catalogue run once, twice and three times over.
    growth: tuple[tuple[int, float], ...] = ()
    # CPU seconds of this process for each audit and each one-server floor, in the same order.
    audit_cpu: tuple[float, ...] = ()
    floor_cpu: tuple[float, ...] = ()
    # Each audit's wall seconds in its own round trips, in the same order; and each floor's (the one
    # with as many servers as the audit started, if it was timed), and the median run's.
    audit_round_trips: tuple[float, ...] = ()
    floor_round_trips: tuple[float, ...] = ()
    median_round_trips: float = 0.0
    # CPU seconds of this process for the floor with as many servers as the audit (when timed).
    floor_same_cpu: tuple[float, ...] = ()
    # --compare-confinement: the same audit with its servers unconfined, run in turn with the others.
    unconfined: tuple[float, ...] = ()
    unconfined_cpu: tuple[float, ...] = ()

    @staticmethod
    def median(runs: Sequence[float]) -> float:
        return statistics.median(runs)

    @property
    def ratio(self) -> float:
        return self.median(self.audit) / self.median(self.floor)

    @property
    def ratio_same_processes(self) -> float:
        same = self.floor_same_processes or self.floor  # one process: the same floor
        return self.median(self.audit) / self.median(same)

    def lines(self, target: str, *, ablation: bool = True) -> list[str]:
        cost, runs, median = self.cost, len(self.audit), self.median
        processes = cost.processes_started
        in_process = target.startswith("py:")
        started = "server instances built in-process" if in_process else "server processes started"
        lines = [
            f"target: {target}",
            f"attacks: {cost.attacks} ({cost.second_process_attacks} need a second server process)",
            f"round trips: {cost.tool_listings + cost.tool_calls} "
            f"({cost.tool_listings} tools/list, {cost.tool_calls} tools/call)",
            f"{started}: {processes}",
        ]
        if in_process:
            # In-process audits also re-run what the SDK boundary refused: more work than over stdio.
            lines.append(
                "ablation: on (attacks the SDK boundary refused, again without it)"
                if ablation
                else "ablation: off (only the attacks, the same work as over stdio)"
            )
        lines += [
            f"audit: {median(self.audit):.3f} s",
            f"floor: {median(self.floor):.3f} s "
            + (
                "(a bare SDK client, one server process, the audit's own requests again"
                if cost.sent
                else "(a bare SDK client, one server process, the same round trips"
            )
            + (f", and the {cost.waited:.3f} s the attacks must let pass)" if cost.waited else ")"),
            f"ratio: {self.ratio:.2f}x",
            self._paired_line(),
        ]
        if cost.sent:
            lines.append(
                f"the floor's requests: the {len(cost.sent)} tools/call the audit sent, in its order, each to "
                "the server it went to, those in flight together sent together; the files they name made "
                "before its clock starts; a state the audit's server replied with sent back as the state "
                "the floor's own server replied with"
            )
        if cost.waited:
            audit, floor = median(self.audit) - cost.waited, median(self.floor) - cost.waited
            lines.append(
                f"without the waits: audit {audit:.3f} s, floor {floor:.3f} s, ratio {audit / floor:.2f}x"
            )
        lines += self._own_work_lines()
        lines += self._cpu_lines(in_process)
        if processes > 1 and self.floor_same_processes:
            lines += [
                f"floor with {processes} servers: {median(self.floor_same_processes):.3f} s "
                "(started side by side, as the audit starts them)",
                f"ratio to it: {self.ratio_same_processes:.2f}x",
            ]
        elif processes > 1:
            lines.append(
                f"floor with {processes} servers: not timed (isolation: process starts one per attack, "
                "a few ahead of the attack that uses it; the audit's time is the figure)"
            )
        if self.phases:
            total = sum(self.phases.values()) or 1.0
            lines.append("where the audit's time went (median run, each second counted once):")
            lines += [
                f"  {name:<9}{seconds:8.3f} s  {100 * seconds / total:5.1f}%"
                for name, seconds in self.phases.items()
            ]
        lines += self._confinement_lines()
        lines += _growth_lines(self.growth)
        return [*lines, f"(medians of {runs} runs each, alternating)"]

    def _paired_line(self) -> str:
        """Each audit over the floor run right after it: what the machine's drift moves least.

        The two medians above can come from different moments of a machine whose speed drifts
        (another tenant's load on a shared host); an audit and the floor beside it share one. The
        floor with as many servers as the audit, when it was timed: the one the goal is set against.
        """
        same = bool(self.floor_same_processes)
        floors = self.floor_same_processes if same else self.floor
        pairs = sorted(a / f for a, f in zip(self.audit, floors, strict=False) if f > 0)
        which = f"the floor with {self.cost.processes_started} servers" if same else "the floor"
        label = f"ratio of each audit to {which} run right after it"
        if not pairs:
            return f"{label}: none timed"
        spread = f" ({pairs[0]:.2f}x to {pairs[-1]:.2f}x over {len(pairs)} pairs)" if len(pairs) > 1 else ""
        return f"{label}: median {self.median(pairs):.2f}x{spread}"

    def _cpu_lines(self, in_process: bool) -> list[str]:
        """CPU seconds (user and system), the figure other jobs on a busy machine move least.

        In process, target and harness share this process: its CPU time is the whole of each, and
        a wait costs none. Over stdio it is the harness's own (the floor's: a bare client's), set
        against the floor that starts as many servers; the servers' own CPU is the target's work.
        """
        median = self.median
        floor_cpu = self.floor_same_cpu or self.floor_cpu
        if not self.audit_cpu or not floor_cpu or median(floor_cpu) <= 0:
            return []
        audit_cpu, floor = median(self.audit_cpu), median(floor_cpu)
        if in_process:
            return [
                f"cpu (this process, user and system): audit {audit_cpu:.3f} s, floor {floor:.3f} s, "
                f"ratio {audit_cpu / floor:.2f}x"
            ]
        servers = self.cost.processes_started if self.floor_same_cpu else 1
        return [
            f"cpu of the harness's own process (user and system): audit {audit_cpu:.3f} s, bare client "
            f"with {servers} server{'s' if servers > 1 else ''} {floor:.3f} s, "
            f"{audit_cpu - floor:.3f} s more ({1000 * (audit_cpu - floor) / max(self.cost.attacks, 1):.2f} ms "
            "per attack)"
        ]

    def _confinement_lines(self) -> list[str]:
        """--compare-confinement: the ratio to the floor confined, unconfined, and the one against the other."""
        if not self.unconfined:
            return []
        median = self.median
        floor = median(self.floor_same_processes or self.floor)
        confined, unconfined = median(self.audit), median(self.unconfined)
        lines = [
            f"unconfined (--mcp-no-confinement), in turn with the others: audit {unconfined:.3f} s, "
            f"ratio to the same floor {unconfined / floor:.2f}x (confined: {confined / floor:.2f}x)",
            f"confined against unconfined: {confined / unconfined:.3f}x wall clock",
        ]
        if self.unconfined_cpu and self.audit_cpu and median(self.unconfined_cpu) > 0:
            cpu, free = median(self.audit_cpu), median(self.unconfined_cpu)
            lines.append(
                f"  cpu of the harness's own process: confined {cpu:.3f} s, unconfined {free:.3f} s, "
                f"{cpu / free:.3f}x"
            )
        return lines

    def _own_work_lines(self) -> list[str]:
        """The audit against a floor making the audit's own round trips, and the harness's work between them.

        The floor's requests are all round one on one plain name; the audit's carry hostile names,
        answers and states, which cost the target and the client more. Timed inside the audit as it
        sent them, its round trips are exactly the ones it needs, whatever they carry: put in place
        of the floor's own, they make a floor no audit of these attacks can go below.
        """
        if not self.audit_round_trips or not self.floor_round_trips:
            return []
        median, waited = self.median, self.cost.waited
        trips, floor_trips = median(self.audit_round_trips), median(self.floor_round_trips)
        floor = median(self.floor_same_processes or self.floor) - floor_trips + trips
        audit = median(self.audit)
        servers = self.cost.processes_started if self.floor_same_processes else 1
        lines = [
            f"in its own round trips: {trips:.3f} s (the audit's requests, timed as it sent them; "
            f"the floor's: {floor_trips:.3f} s)"
        ]
        if servers == self.cost.processes_started:
            # Under `isolation: process` no floor starts a server per attack: nothing to set it against.
            lines += [
                f"floor with the audit's own round trips: {floor:.3f} s (the floor's start and stop with "
                f"{servers} server{'s' if servers > 1 else ''}, the audit's round trips"
                + (", the waits)" if waited else ")"),
                f"ratio to the floor with its own round trips: {audit / floor:.2f}x"
                + (f", without the waits {(audit - waited) / (floor - waited):.2f}x" if waited else ""),
            ]
        if self.phases:
            between = sum(self.phases.get(name, 0.0) for name in ("controls", "probes", "attacks"))
            own = between - self.median_round_trips
            lines.append(
                f"the harness's own work between its round trips: {own:.3f} s in controls and attacks, "
                f"{1000 * own / max(self.cost.attacks, 1):.2f} ms per attack"
            )
        return lines


def _growth_lines(growth: Sequence[tuple[int, float]]) -> list[str]:
    """Time against attacks, the catalogue run once, twice and three times over: linear if the steps agree."""
    if len(growth) < 2:
        return []
    lines = ["growth (the catalogue run once, twice, three times over in one audit):"]
    lines += [f"  {attacks:5d} attacks  {seconds:8.3f} s" for attacks, seconds in growth]
    slopes = [
        (later[1] - earlier[1]) / (later[0] - earlier[0])
        for earlier, later in itertools.pairwise(growth)
        if later[0] > earlier[0]
    ]
    lines.append("  slope: " + ", then ".join(f"{1000 * s:.2f} ms per attack" for s in slopes))
    if len(slopes) >= 2 and slopes[0] > 0:
        lines.append(f"  the second step costs {slopes[-1] / slopes[0]:.2f}x the first (1.00x: linear)")
    return lines


def audit_once(profile: Profile, catalogue: Catalogue, selected: Sequence[AttackSpec]) -> AuditCost:
    """One whole audit, as `run_audit` does it and its reports written, from start-up to the last file."""
    started, cpu = time.perf_counter(), _cpu()
    session = AuditSession(profile, catalogue)
    session.stats.sent = []
    session.start(selected)
    results: list[Result] = []
    controls: list[ControlResult] = []
    assert session.sandbox is not None
    sandbox = str(session.sandbox.base)
    try:
        for plan in session.plans:
            controls.extend(session.controls(plan.name).results)
            for spec in selected:
                results.append(session.run(spec, plan.name)[0])
    finally:
        session.close()
    stats = session.stats
    with stats.clock.phase("reports"), tempfile.TemporaryDirectory(prefix="mcp-bench-report-") as out:
        target = {"command": profile.command, "tools": [plan.name for plan in session.plans]}
        write_reports(Path(out), build_report(results, controls, target))
    seconds, cpu = time.perf_counter() - started, _cpu() - cpu
    return AuditCost(
        seconds=seconds,
        attacks=len(selected) * len(session.plans),
        processes_started=stats.processes_started,
        second_process_attacks=sum(spec.second_process for spec in selected),
        tool_listings=stats.tool_listings,
        tool_calls=stats.round_trips - stats.tool_listings,
        plan=session.plans[0],
        waited=stats.waited,
        phases=dict(stats.clock.totals),
        cpu=cpu,
        in_round_trips=stats.in_round_trips,
        sent=tuple(stats.sent or ()),
        sandbox=sandbox,
    )


def _cpu() -> float:
    """CPU seconds (user and system) this process has used, every thread of it."""
    return time.process_time()


def floor_once(profile: Profile, cost: AuditCost, processes: int = 1) -> float:
    """A bare SDK client: start the server, make the same round trips, stop it."""
    return floor_timed(profile, cost, processes).seconds


@dataclass(frozen=True)
class FloorRun:
    seconds: float
    # CPU seconds this process used meanwhile.
    cpu: float
    # Of `seconds`, those spent in the round trips themselves (the rest: start, stop, the waits).
    in_round_trips: float


def floor_timed(profile: Profile, cost: AuditCost, processes: int = 1) -> FloorRun:
    """`floor_once`, timed: its wall seconds, its CPU seconds and its round trips' part."""
    # Where the audit's sandbox goes (RAM where there is some): the server's file work costs the same in both.
    with tempfile.TemporaryDirectory(prefix="mcp-bench-", dir=scratch_directory()) as scratch:
        root = Path(os.path.realpath(scratch)) / "root"
        root.mkdir()
        (root / "victim.txt").write_text("victim\n")
        # Before the clock: the requests, their paths moved to this root, and the files they name.
        replay = replayed(cost, root, processes)
        trips: list[float] = []
        started, cpu = time.perf_counter(), _cpu()
        anyio.run(_floor, profile, root, cost, processes, replay, trips)
        return FloorRun(time.perf_counter() - started, _cpu() - cpu, sum(trips))


@dataclass(frozen=True)
class Replayed:
    """One of the audit's tools/call requests, as the floor sends it again."""

    # Which of the floor's servers it goes to (the audit's processes, numbered as first used).
    server: int
    name: str
    arguments: dict[str, Any]
    state: str | None = None
    # Params the typed call cannot carry (answers, a hand-written request): sent as they are.
    raw: dict[str, Any] | None = None
    # Which client of that server (the audit's connections to its process, numbered as first used):
    # in process, another client is opened as the audit opened one; over stdio a process has one.
    client: int = 0
    # The requestState the audit's reply carried: the floor's reply to it stands for it from then on.
    state_back: str | None = None


def replayed(cost: AuditCost, root: Path, processes: int) -> list[list[Replayed]]:
    """The audit's requests in the order sent, grouped: the calls of a group were in flight together.

    A path under the audit's sandbox becomes the same path under the floor's; every file a
    request's path argument names inside `root` is made (a regular file, as a case's victim),
    so the server finds what it found in the audit. A request on a handshake-era connection
    goes again without its state or answers (there, a question's answer is no tools/call).
    Empty when the audit kept no requests: the floor then sends round one on one plain name.
    """
    servers: dict[Any, int] = {}
    clients: dict[Any, dict[int, int]] = {}
    groups: list[list[Replayed]] = []
    until = -1.0
    audit_base, floor_base = cost.sandbox, str(root.parent)
    for sent in cost.sent:
        request = _moved(dict(sent.request), audit_base, floor_base) if audit_base else dict(sent.request)
        server = servers.setdefault(sent.process, len(servers)) % processes
        of_process = clients.setdefault(sent.process, {})
        call = replace(
            _call_of(server, request, legacy=sent.legacy),
            client=of_process.setdefault(sent.client, len(of_process)),
            state_back=None if sent.legacy else sent.state_back,
        )
        _make_named_files(root, call, cost.plan.path_arg)
        if sent.started < until and groups:
            groups[-1].append(call)
        else:
            groups.append([call])
        until = max(until, sent.ended)
    return groups


def _moved(value: Any, old: str, new: str) -> Any:
    """`value` with every path under the audit's sandbox `old` put under the floor's `new`."""
    if isinstance(value, str):
        return new + value[len(old) :] if value.startswith(old) else value
    if isinstance(value, dict):
        return {key: _moved(item, old, new) for key, item in value.items()}
    if isinstance(value, list):
        return [_moved(item, old, new) for item in value]
    return value


def _call_of(server: int, request: Mapping[str, Any], *, legacy: bool) -> Replayed:
    name, arguments, state = request.get("name"), request.get("arguments"), request.get("requestState")
    params = {key: value for key, value in request.items() if key != "method"}
    if isinstance(name, str) and isinstance(arguments, dict):
        if legacy:
            return Replayed(server, name, arguments)
        if set(params) <= {"name", "arguments", "requestState"} and (state is None or isinstance(state, str)):
            return Replayed(server, name, arguments, state)
    return Replayed(server, str(name), {}, raw=params)


def _make_named_files(root: Path, call: Replayed, path_arg: str | None) -> None:
    """The file the call's path argument names, made if it would lie inside `root` (never outside it)."""
    arguments = call.raw.get("arguments") if call.raw is not None else call.arguments
    value = arguments.get(path_arg) if isinstance(arguments, dict) and path_arg else None
    if not isinstance(value, str) or not value:
        return
    try:
        target = Path(os.path.realpath(root / value))
        if not target.is_relative_to(root) or target == root or target.exists():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("victim\n")
    except (OSError, ValueError):
        return  # a name no filesystem takes (a NUL, too long): the server cannot find it either


async def _declines(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


async def _floor(
    profile: Profile,
    root: Path,
    cost: AuditCost,
    processes: int,
    replay: Sequence[Sequence[Replayed]],
    trips: list[float],
) -> None:
    token = f"{root.parent.name}/floor"
    clients: dict[tuple[int, int], Client] = {}
    servers: dict[int, Any] = {}
    started = [anyio.Event() for _ in range(processes)]
    finished = anyio.Event()

    async def hold(index: int, errlog: TextIO) -> None:
        servers[index] = server = _server(profile, root, token, errlog)
        # Declares elicitation as the harness does: a careful server answers -32021 to a client that does not.
        async with Client(server, elicitation_callback=_declines) as client:
            clients[index, 0] = client
            started[index].set()
            await finished.wait()

    try:
        with open(os.devnull, "w") as errlog:
            async with anyio.create_task_group() as group:
                for index in range(processes):
                    group.start_soon(hold, index, errlog)
                await started[0].wait()
                began = time.perf_counter()
                if replay:
                    async with contextlib.AsyncExitStack() as others:
                        floor = _Floor(clients, servers, started, others, profile.is_in_process)
                        await _replay(floor, cost, replay, profile.call_timeout)
                else:
                    await _round_trips(clients[0, 0], cost)
                trips.append(time.perf_counter() - began)
                # What the audit had to let pass (an answer after a lifetime), no client can skip.
                await anyio.sleep(cost.waited)
                for event in started:
                    await event.wait()
                finished.set()
    finally:
        await reaper.kill_all(lambda: reaper.marked(token))


@dataclass
class _Floor:
    """The floor's clients, by server and client; in process another is opened when a request needs it."""

    clients: dict[tuple[int, int], Client]
    servers: Mapping[int, Any]
    started: Sequence[anyio.Event]
    others: contextlib.AsyncExitStack
    in_process: bool

    async def client(self, call: Replayed) -> Client:
        await self.started[call.server].wait()
        key = (call.server, call.client if self.in_process else 0)
        if key not in self.clients:
            # As the audit attaches another client to the process (another agent's session).
            opened = Client(self.servers[call.server], elicitation_callback=_declines)
            self.clients[key] = await self.others.enter_async_context(opened)
        return self.clients[key]


async def _replay(
    floor: _Floor, cost: AuditCost, replay: Sequence[Sequence[Replayed]], timeout: float
) -> None:
    """The tools/list calls, then the audit's own requests, each group's sent together."""
    for _ in range(cost.tool_listings):
        await floor.clients[0, 0].session.list_tools()
    # The audit's states and the floor's replies that stand for them (see `_resend`).
    states: dict[str, str] = {}
    for calls in replay:
        # Opened in this task, which closes them: a client is no request's to close.
        sessions = [(await floor.client(call)).session for call in calls]
        if len(calls) == 1:
            await _resend(sessions[0], calls[0], timeout, states)
            continue
        async with anyio.create_task_group() as together:
            for session, call in zip(sessions, calls, strict=True):
                together.start_soon(_resend, session, call, timeout, states)


async def _resend(session: ClientSession, call: Replayed, timeout: float, states: dict[str, str]) -> None:
    """One of the audit's requests again, a state its server sealed sent as the floor's server sealed it.

    A state is the server's own (sealed with its key), so the audit's means nothing to the floor's
    server: sent as it was, every answer would be refused at once, work the audit's server did
    (opening the state, spending it, acting) left out. The floor's reply to a request stands for the
    audit's reply to it: a later request sending the audit's state back sends the floor's instead.
    A state the audit made up or changed (a forged one) was never a reply, so it goes as it was.
    """
    back: Any = None
    # As bounded as the audit's: a request the server never answers costs the floor a round trip's bound.
    with anyio.move_on_after(timeout), contextlib.suppress(MCPError, RuntimeError, ValidationError):
        if call.raw is not None:
            params, sent = call.raw, call.raw.get("requestState")
            if isinstance(sent, str) and sent in states:
                params = {**params, "requestState": states[sent]}
            raw = _RawToolCall(method="tools/call", params=params)
            reply = await session.send_request(raw, _RAW_RESULT)  # type: ignore[type-var]
            back = reply.get("requestState") if isinstance(reply, Mapping) else None
        else:
            state = states.get(call.state, call.state) if call.state is not None else None
            result = await session.call_tool(
                call.name, call.arguments, allow_input_required=True, request_state=state
            )
            back = getattr(result, "request_state", None)
    if call.state_back is not None and isinstance(back, str):
        states[call.state_back] = back


async def _round_trips(client: Client, cost: AuditCost) -> None:
    plan = cost.plan
    arguments: dict[str, Any] = dict(plan.extra_args)
    if plan.path_arg is not None:
        arguments[plan.path_arg] = "victim.txt"
    for _ in range(cost.tool_listings):
        await client.session.list_tools()
    for _ in range(cost.tool_calls):
        # Round one of the audited tool: asked, never answered.
        await client.session.call_tool(plan.name, arguments, allow_input_required=True)


def _server(profile: Profile, root: Path, token: str, errlog: TextIO) -> Any:
    if profile.is_in_process:
        return _build_in_process(profile, root)
    argv = profile.argv(root)
    # Launched as the audit launches it: same command, environment and directory.
    env = {**os.environ, **profile.env, "MCP_AUDIT_ROOT": str(root), reaper.MARKER_VARIABLE: token}
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(root))
    return stdio_client(params, errlog=errlog)


def run_bench(
    profile: Profile,
    *,
    repeat: int = 3,
    families: Sequence[str] = (),
    catalogue: Catalogue | None = None,
    growth: bool = False,
    compare_confinement: bool = False,
) -> BenchResult:
    if profile.is_url:
        raise UsageError(_NOT_A_URL)
    catalogue = catalogue or load_catalogue()
    unknown = sorted(set(families) - set(catalogue.families))
    if unknown:
        raise UsageError(f"no attack family {unknown[0]!r}; families: {', '.join(catalogue.families)}")
    selected = [spec for spec in catalogue.active if not families or spec.family in families]
    audits: list[AuditCost] = []
    floors: list[float] = []
    floors_cpu: list[float] = []
    floors_same: list[float] = []
    isolated = profile.isolation == "process"
    floors_trips: list[float] = []
    floors_same_trips: list[float] = []
    floors_same_cpu: list[float] = []
    unconfined: list[AuditCost] = []
    if compare_confinement and (profile.is_in_process or profile.confinement == "off"):
        raise UsageError(
            "--compare-confinement times a target started as a process, confined and not: "
            "give a command (not py:) and drop --mcp-no-confinement"
        )
    for _ in range(repeat):
        audits.append(audit_once(profile, catalogue, selected))
        if compare_confinement:
            unconfined.append(audit_once(replace(profile, confinement="off"), catalogue, selected))
        floor = floor_timed(profile, audits[0])
        floors.append(floor.seconds)
        floors_cpu.append(floor.cpu)
        floors_trips.append(floor.in_round_trips)
        if audits[0].processes_started > 1 and not isolated:
            same = floor_timed(profile, audits[0], audits[0].processes_started)
            floors_same.append(same.seconds)
            floors_same_trips.append(same.in_round_trips)
            floors_same_cpu.append(same.cpu)
    middle = sorted(audits, key=lambda a: a.seconds)[len(audits) // 2]
    grown: list[tuple[int, float]] = []
    if growth:
        for times in (1, 2, 3):
            run = audit_once(profile, catalogue, selected * times)
            grown.append((run.attacks, run.seconds))
    return BenchResult(
        tuple(a.seconds for a in audits),
        tuple(floors),
        tuple(floors_same),
        audits[0],
        phases=middle.phases,
        growth=tuple(grown),
        audit_cpu=tuple(a.cpu for a in audits),
        floor_cpu=tuple(floors_cpu),
        audit_round_trips=tuple(a.in_round_trips for a in audits),
        floor_round_trips=tuple(floors_same_trips or floors_trips),
        median_round_trips=middle.in_round_trips,
        floor_same_cpu=tuple(floors_same_cpu),
        unconfined=tuple(a.seconds for a in unconfined),
        unconfined_cpu=tuple(a.cpu for a in unconfined),
    )


@contextlib.contextmanager
def _quiet_in_process(profile: Profile) -> Iterator[None]:
    """An in-process target writes to the harness's own stderr: not among the figures.

    Over stdio its stderr goes to the sandbox's log (or, for the floor, nowhere),
    so the same is done here for what it writes while being timed. And its log
    records go through a plain handler, as in `run`, where pytest's logging plugin
    holds the root logger: the SDK's server otherwise installs its default, which
    renders every record with rich (a refusal's traceback syntax-highlighted), a
    cost `run` never pays (about a third of an in-process audit's CPU).
    """
    if not profile.is_in_process:
        yield
        return
    root = logging.getLogger()
    with contextlib.redirect_stderr(io.StringIO()):
        handler = logging.StreamHandler() if not root.handlers else None
        if handler is not None:
            root.addHandler(handler)
        try:
            yield
        finally:
            if handler is not None:
                root.removeHandler(handler)


def add_parser(sub: Any) -> None:
    bench = sub.add_parser(
        "bench", help="time the audit against a bare SDK client making the same round trips"
    )
    bench.add_argument(
        "--mcp-target", metavar="CMD", help="the server: a command with {root}, or py:module:factory"
    )
    bench.add_argument("--mcp-profile", metavar="FILE", help="a target profile (YAML)")
    bench.add_argument(
        "--mcp-call-timeout", metavar="SECONDS", type=float, help="seconds for any one round trip"
    )
    bench.add_argument(
        "--mcp-no-ablation",
        action="store_true",
        help="in-process targets: only the attacks, as over stdio (no re-run without the SDK boundary)",
    )
    bench.add_argument(
        "--mcp-no-confinement",
        action="store_true",
        help="start the audit's server processes unconfined (to time confinement's cost against the floor)",
    )
    bench.add_argument(
        "--compare-confinement",
        action="store_true",
        help="also time the audit with its servers unconfined, in turn with the others; print both ratios",
    )
    bench.add_argument("--repeat", type=int, default=3, help="runs of each, alternating (default 3)")
    bench.add_argument("--family", action="append", default=[], help="only this attack family (repeatable)")
    bench.add_argument(
        "--growth",
        action="store_true",
        help="also time one audit with the catalogue run once, twice and three times over; print the slope",
    )


def main(args: argparse.Namespace) -> int:
    try:
        if args.repeat < 1:
            raise UsageError("--repeat must be at least 1")
        profile = load_profile(Path(args.mcp_profile)) if args.mcp_profile else None
        if Profile(command=args.mcp_target or (profile.command if profile else "")).is_url:
            raise UsageError(_NOT_A_URL)
        profile = resolve_profile(profile, args.mcp_target, None)
        if args.mcp_call_timeout:
            profile = replace(profile, call_timeout=args.mcp_call_timeout)
        if args.mcp_no_ablation:
            profile = replace(profile, ablation=False)
        if args.mcp_no_confinement:
            profile = replace(profile, confinement="off")
        with _quiet_in_process(profile):
            result = run_bench(
                profile,
                repeat=args.repeat,
                families=args.family,
                growth=args.growth,
                compare_confinement=args.compare_confinement,
            )
    # pytest's exit codes, as for an audit: 4 a usage error, 2 the target would not start.
    except UsageError as exc:
        print(f"mcp-confirm-audit bench: {exc}", file=sys.stderr)
        return 4
    except TargetError as exc:
        print(f"mcp-confirm-audit bench: {exc}", file=sys.stderr)
        return 2
    print("\n".join(result.lines(profile.command, ablation=profile.ablation)))
    return 0
