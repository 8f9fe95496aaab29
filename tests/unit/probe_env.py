"""A ProbeEnv for unit tests of the probes: a real root, a table of read-only results, a real Sink."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_confirm_audit.oracle.effects import EffectProbe, ProbeSpec, build_probe
from mcp_confirm_audit.oracle.kinds.sink import Sink


@dataclass
class FakeEnv:
    root: Path
    results: dict[str, Any] = field(default_factory=dict)
    sink: Sink | None = None
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def call_read_only(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        self.calls.append((tool, dict(arguments)))
        return self.results[tool]

    def sink_requests(self) -> list[dict[str, Any]]:
        assert self.sink is not None
        return self.sink.requests()


def observe(spec: ProbeSpec | EffectProbe, env: FakeEnv) -> Any:
    """What the probe (or the one built from `spec`) sees now, on a loop of its own."""
    probe = build_probe(spec) if isinstance(spec, ProbeSpec) else spec
    return asyncio.run(probe.observe(env))
