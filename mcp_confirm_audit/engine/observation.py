"""Running the effect probes of one action: through the target's connections, the root and the sink.

A read-only tool is asked on every process an attack talked to (a payment made
on a replica shows only on that replica); files, databases and the sink are
looked at once. What a probe could not see (the target stopped answering) is
recorded as unobserved, never as a change: a crash is not an effect.

While the target's question is open (a legacy call parked at it), a read-only
tool is asked only if the target serves requests meanwhile. That is learned
from the target itself, once per audit (`Serving`): the first such probe is
waited for a bounded time, and a target that lets it wait serves one request at
a time. From then on its tool probes are not sent while a question is open, and
what they would have seen is recorded as unobserved, saying why (`WHILE_ASKING`):
the audit never stalls on a probe the target holds back until its question times out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..models import Exchange, Outcome, Phase
from ..oracle.effects import UNOBSERVED, WHILE_ASKING, EffectProbe, ProbeSpec, build_probe
from ..target.driver import Connection
from .action import result_value
from .phases import PhaseClock

# The longest the first probe sent while a question is open is waited for: a read-only call a
# target serving requests meanwhile answers in milliseconds. A quarter of the target's own
# deadline for its person at most, so the person's answer still finds the question open.
LEARNING_BOUND = 2.0


class Serving:
    """Whether the target serves requests while its question is open: unknown until a probe shows it."""

    def __init__(self) -> None:
        self.one_at_a_time: bool | None = None
        # What showed it, for the report ("serves one request at a time: ...").
        self.learned = ""

    def bound(self, conn: Connection) -> float:
        limits = [LEARNING_BOUND, conn.call_timeout / 4]
        if conn.answer_deadline:
            limits.append(conn.answer_deadline / 4)
        return min(limits)


class Observer:
    def __init__(
        self,
        specs: Sequence[ProbeSpec],
        root: Path,
        sink: Any = None,
        clock: PhaseClock | None = None,
        serving: Serving | None = None,
    ) -> None:
        self.specs = tuple(specs)
        self.probes: tuple[EffectProbe, ...] = tuple(build_probe(spec) for spec in self.specs)
        self.root = root
        self.sink = sink
        self.clock = clock or PhaseClock()
        # Shared by every observer of one audit: what one learned, the others know.
        self.serving = serving or Serving()

    def with_specs(self, specs: Sequence[ProbeSpec]) -> Observer:
        return Observer(specs, self.root, self.sink, self.clock, self.serving)

    async def observe(self, connections: Sequence[Connection]) -> dict[str, Any]:
        """probe name (with `@connection` for every connection but the first) -> what it saw."""
        if not self.probes:
            return {}
        with self.clock.phase("probes"):
            return await self._observe(connections)

    async def _observe(self, connections: Sequence[Connection]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for index, conn in enumerate(_distinct(connections)):
            env = _Env(self.root, conn, self.sink, self.serving)
            for spec, probe in zip(self.specs, self.probes, strict=True):
                if spec.kind != "tool" and index > 0:
                    continue
                name = spec.name if index == 0 else f"{spec.name}@{conn.name}"
                try:
                    seen[name] = await probe.observe(env)
                except _Unobserved as exc:
                    seen[name] = {UNOBSERVED: str(exc)}
        return seen


class _Unobserved(Exception):
    pass


class _Env:
    def __init__(self, root: Path, conn: Connection, sink: Any, serving: Serving) -> None:
        self._root, self._conn, self._sink, self._serving = root, conn, sink, serving

    @property
    def root(self) -> Path:
        return self._root

    async def call_read_only(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        if self._conn.asking_for(tool) and self._serving.one_at_a_time is not False:
            exchange = await self._while_asking(tool, arguments)
        else:
            exchange = await self._conn.call(Phase.SETUP, f"probe {tool}", tool, arguments)
        response = exchange.response
        if response.outcome is not Outcome.COMPLETE:
            raise _Unobserved(f"{tool} answered {response.outcome}: {response.text[:200]}")
        return result_value(response)

    async def _while_asking(self, tool: str, arguments: Mapping[str, Any]) -> Exchange:
        """The probe while a question is open: sent only to a target not known to serve one request at a time."""
        serving = self._serving
        if serving.one_at_a_time:
            raise _Unobserved(WHILE_ASKING)
        bound = serving.bound(self._conn)
        exchange = await self._conn.call_within(Phase.SETUP, f"probe {tool}", tool, arguments, bound)
        if exchange is None:
            serving.one_at_a_time = True
            serving.learned = (
                f"serves one request at a time: the read-only {tool}, sent while its question was open, "
                f"did not come back within {bound:g}s; its read-only tools are then asked only when no "
                "question is open"
            )
            raise _Unobserved(WHILE_ASKING)
        serving.one_at_a_time = False
        serving.learned = f"serves requests while its question is open (the read-only {tool} came back)"
        return exchange

    def sink_requests(self) -> list[dict[str, Any]]:
        return list(self._sink.requests()) if self._sink is not None else []


def _distinct(connections: Sequence[Connection]) -> list[Connection]:
    """One connection per process: clients attached to one endpoint see the same world."""
    seen: set[object] = set()
    out = []
    for conn in connections:
        key = conn.endpoint if isinstance(conn.endpoint, str) else id(conn.endpoint or conn)
        if key not in seen and conn.alive:
            seen.add(key)
            out.append(conn)
    return out
