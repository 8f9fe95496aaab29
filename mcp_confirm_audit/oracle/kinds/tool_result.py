"""The `tool` effect: a read-only tool's result, compared before and after.

    effect:
      - tool: list_payments                                  # -> tool:list_payments[0].amount
      - tool: {name: get_robot_state, args: {arm: 1}}        # with arguments

The call goes through the same client as every other round trip (and is
counted and bounded like one); the engine decides which tools are read-only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..effects import ProbeEnv, ProbeSpec, probe_kind


@dataclass(frozen=True, slots=True)
class ToolResultProbe:
    name: str
    tool: str
    args: Mapping[str, Any] = field(default_factory=dict)

    async def observe(self, env: ProbeEnv) -> Any:
        return await env.call_read_only(self.tool, dict(self.args))


@probe_kind("tool")
def tool_probe(spec: ProbeSpec) -> ToolResultProbe:
    tool = spec.options.get("tool")
    args = spec.options.get("args") or {}
    if not isinstance(tool, str) or not tool:
        raise ValueError(f"effect {spec.name}: 'tool' must name a read-only tool")
    if not isinstance(args, Mapping):
        raise ValueError(f"effect {spec.name}: 'args' must be a mapping of argument names to values")
    return ToolResultProbe(spec.name, tool, dict(args))
