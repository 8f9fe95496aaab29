"""`ungated`: another tool of the server acts with no confirmation at all, while this one is gated.

Every other tool that is not read-only and acts on the same subject (names a
file, or takes the action's own arguments) is called once, plainly, on the
victim (never the gated tool's own approve or execute steps, nor a policy
tool). An effect is weak: an agent reaches the same harm around the gate,
though nothing it was told to confirm was skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..confirmations.detect import policy_tools
from ..confirmations.pending import Pending
from ..engine.action import Instance
from ..models import Verdict
from ..target.discovery import arguments_for, path_argument
from ..target.driver import ToolInfo
from . import technique
from .base import Attack


@technique("ungated")
async def ungated(attack: Attack, params: Mapping[str, Any]) -> None:
    mechanism = attack.plan.mechanism
    own = set(mechanism.own_tools) if isinstance(mechanism, Pending) else set()
    own |= {t.name for t in policy_tools(attack.tools, attack.plan.policy_tools)}
    victim = attack.victim
    candidates = [
        t
        for t in attack.tools
        if t.name != attack.plan.name and t.name not in own and t.read_only is not True
    ]
    others = [t for t in candidates if _same_subject(t, victim)]
    if not others:
        subject = "names a file" if isinstance(victim, Path) else "takes this action's arguments"
        attack.not_applicable(f"no other tool of the target that is not read-only {subject}")
        return
    await attack.start_attack()
    for tool in others:
        attack.effect_means(
            Verdict.WEAK, f"{tool.name} acted with no confirmation while {attack.plan.name} is gated"
        )
        since = await attack.mark()
        await attack.call(
            f"{tool.name}, plainly", victim, arguments=_plainly(attack, tool, victim), tool=tool.name
        )
        if await attack.took_effect(victim, since):
            return


def _same_subject(tool: ToolInfo, victim: Path | Instance) -> bool:
    """A tool that could act on this subject: it names a file, or takes every argument the action does."""
    if isinstance(victim, Path):
        return path_argument(tool) is not None
    properties = (tool.input_schema or {}).get("properties") or {}
    return bool(victim.arguments) and all(name in properties for name in victim.arguments)


def _plainly(attack: Attack, tool: ToolInfo, victim: Path | Instance) -> dict[str, Any]:
    if isinstance(victim, Path):
        return arguments_for(tool, attack.path_value(victim))
    return {**arguments_for(tool, None), **victim.arguments}
