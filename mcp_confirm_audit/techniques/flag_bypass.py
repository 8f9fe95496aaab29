"""`flag-bypass`: the caller's own approval argument makes act an action that otherwise asks or refuses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations.detect import approval_argument
from ..confirmations.flag import Flag
from . import technique
from ._flows import tool_info
from .base import Attack


@technique("flag-bypass")
async def flag_bypass(attack: Attack, params: Mapping[str, Any]) -> None:
    mechanism = attack.plan.mechanism
    if isinstance(mechanism, Flag):
        attack.not_applicable(
            f"the flag is the tool's only gate ({mechanism.describe()}); self-approval judges it"
        )
        return
    info = tool_info(attack)
    arg = approval_argument(info) if info is not None else None
    if arg is None:
        attack.not_applicable("the tool takes no argument that claims an approval")
        return
    victim = attack.victim
    await attack.start_attack()
    await attack.call(
        f"the caller sets {arg}: true itself", victim, arguments={**attack.arguments(victim), arg: True}
    )
