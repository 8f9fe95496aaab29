"""`ungated`: another tool of the server acts with no confirmation at all, while this one is gated.

Every other tool that is not read-only and names a file is called once,
plainly, on the victim (never the gated tool's own approve or execute steps,
nor a policy tool). An effect is weak: an agent reaches the same harm around
the gate, though nothing it was told to confirm was skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations.detect import policy_tools
from ..confirmations.pending import Pending
from ..models import Verdict
from ..oracle.sandbox import identity_of
from ..target.discovery import arguments_for, path_argument
from . import technique
from .base import Attack


@technique("ungated")
async def ungated(attack: Attack, params: Mapping[str, Any]) -> None:
    mechanism = attack.plan.mechanism
    own = set(mechanism.own_tools) if isinstance(mechanism, Pending) else set()
    own |= {t.name for t in policy_tools(attack.tools, attack.plan.policy_tools)}
    others = [
        t
        for t in attack.tools
        if t.name != attack.plan.name and t.name not in own and t.read_only is not True and path_argument(t)
    ]
    if not others:
        attack.not_applicable("no other tool of the target that is not read-only names a file")
        return
    if not attack.file_only():  # driven for an action that names a file, so far
        return
    victim = attack.case.victim
    before = identity_of(victim)
    await attack.start_attack()
    for tool in others:
        attack.effect_means(
            Verdict.WEAK, f"{tool.name} acted with no confirmation while {attack.plan.name} is gated"
        )
        await attack.call(
            f"{tool.name}, plainly",
            victim,
            arguments=arguments_for(tool, attack.path_value(victim)),
            tool=tool.name,
        )
        if identity_of(victim) != before:
            return
