"""`tool`: a read-only tool's result, compared before and after."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .effects import ProbeEnv, ProbeSpec, probe_kind


@dataclass(frozen=True, slots=True)
class ToolResultProbe:
    name: str
    tool: str
    args: dict[str, Any]

    async def observe(self, env: ProbeEnv) -> Any:
        return await env.call_read_only(self.tool, self.args)


@probe_kind("tool")
def tool_probe(spec: ProbeSpec) -> ToolResultProbe:
    return ToolResultProbe(spec.name, str(spec.options["tool"]), dict(spec.options.get("args") or {}))
