"""`ungated`: another tool of the server acts with no confirmation at all, while this one is gated.

Every other tool that is not read-only and acts on the same subject (names a
file, or takes the action's own arguments) is called once, plainly, on the
victim (never the gated tool's own approve or execute steps, nor a policy
tool). An effect is weak: an agent reaches the same harm around the gate,
though nothing it was told to confirm was skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations.detect import policy_tools
from ..confirmations.pending import Pending
from ..confirmations.token import Token
from ..models import Verdict
from . import technique
from .base import Attack


@technique("ungated")
async def ungated(attack: Attack, params: Mapping[str, Any]) -> None:
    mechanism = attack.plan.mechanism
    own = set(mechanism.own_tools) if isinstance(mechanism, Pending | Token) else set()
    own |= {t.name for t in policy_tools(attack.tools, attack.plan.policy_tools)}
    victim = attack.victim
    candidates = [
        t
        for t in attack.tools
        if t.name != attack.plan.name and t.name not in own and t.read_only is not True
    ]
    others = [t for t in candidates if victim.acted_on_by(t)]
    if not others:
        attack.not_applicable(f"no other tool of the target that is not read-only {victim.kind_of_subject()}")
        return
    await attack.start_attack()
    for tool in others:
        attack.effect_means(
            Verdict.WEAK, f"{tool.name} acted with no confirmation while {attack.plan.name} is gated"
        )
        since = await attack.mark()
        await attack.call(
            f"{tool.name}, plainly", victim, arguments=victim.plain_arguments(tool), tool=tool.name
        )
        if await attack.took_effect(victim, since):
            return
