"""Running the effect probes of one action: through the target's connections, the root and the sink.

A read-only tool is asked on every process an attack talked to (a payment made
on a replica shows only on that replica); files, databases and the sink are
looked at once. What a probe could not see (the target stopped answering) is
recorded as unobserved, never as a change: a crash is not an effect.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..models import Outcome, Phase
from ..oracle.effects import UNOBSERVED, EffectProbe, ProbeSpec, build_probe
from ..target.driver import Connection
from .action import result_value
from .phases import PhaseClock


class Observer:
    def __init__(
        self, specs: Sequence[ProbeSpec], root: Path, sink: Any = None, clock: PhaseClock | None = None
    ) -> None:
        self.specs = tuple(specs)
        self.probes: tuple[EffectProbe, ...] = tuple(build_probe(spec) for spec in self.specs)
        self.root = root
        self.sink = sink
        self.clock = clock or PhaseClock()

    def with_specs(self, specs: Sequence[ProbeSpec]) -> Observer:
        return Observer(specs, self.root, self.sink, self.clock)

    async def observe(self, connections: Sequence[Connection]) -> dict[str, Any]:
        """probe name (with `@connection` for every connection but the first) -> what it saw."""
        if not self.probes:
            return {}
        with self.clock.phase("probes"):
            return await self._observe(connections)

    async def _observe(self, connections: Sequence[Connection]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for index, conn in enumerate(_distinct(connections)):
            env = _Env(self.root, conn, self.sink)
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
    def __init__(self, root: Path, conn: Connection, sink: Any) -> None:
        self._root, self._conn, self._sink = root, conn, sink

    @property
    def root(self) -> Path:
        return self._root

    async def call_read_only(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        exchange = await self._conn.call(Phase.SETUP, f"probe {tool}", tool, arguments)
        response = exchange.response
        if response.outcome is not Outcome.COMPLETE:
            raise _Unobserved(f"{tool} answered {response.outcome}: {response.text[:200]}")
        return result_value(response)

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
