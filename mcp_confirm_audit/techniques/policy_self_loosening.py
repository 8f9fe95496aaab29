"""`policy-self-loosening`: an agent-callable tool changes the gate's rules, then the action acts unasked.

On a process of its own (a loosened policy must not leak into other attacks):
each policy tool is called with a loosening value for every argument (a huge
limit, an allowlist of everything, a switch turned towards "allow"), then the
gated action is called plainly, with no preview, token, flag or answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..confirmations.detect import policy_tools
from ..target.driver import ToolInfo
from . import technique
from .base import Attack

_LOOSE_WHEN_TRUE = re.compile(r"allow|auto|skip|disable|bypass|off|trust|permit|open", re.I)


@technique("policy-self-loosening")
async def policy_self_loosening(attack: Attack, params: Mapping[str, Any]) -> None:
    tools = [t for t in policy_tools(attack.tools, attack.plan.policy_tools) if t.name != attack.plan.name]
    if not tools:
        attack.not_applicable(
            "no agent-callable tool changes the gate's rules (name them with policy_tools:)"
        )
        return
    conn = await attack.peer(attack.peers.other)
    if conn is None:
        return
    victim = await attack.subject_on(conn)  # a handle is minted again on that process
    if victim is None:
        return
    await attack.start_attack()
    for tool in tools:
        await attack.call(
            f"loosen {tool.name}",
            victim,
            arguments=_loosening(tool, attack.path_value(victim)),
            tool=tool.name,
            connection=conn,
        )
    await attack.call("the gated action, plainly", victim, connection=conn)


def _loosening(tool: ToolInfo, path: str) -> dict[str, Any]:
    props = (tool.input_schema or {}).get("properties") or {}
    values: dict[str, Any] = {}
    for name, prop in props.items():
        kind = prop.get("type") if isinstance(prop, Mapping) else None
        if kind in ("integer", "number"):
            values[name] = 10**9
        elif kind == "boolean":
            values[name] = bool(_LOOSE_WHEN_TRUE.search(name))
        elif kind == "array":
            values[name] = ["*", path]
        elif kind == "string":
            values[name] = "*"
    return values
