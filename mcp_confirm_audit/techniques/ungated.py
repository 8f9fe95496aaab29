"""`ungated`: another tool of the server moves the gated action's effect without asking, while this one is gated.

Every other tool not declared read-only (never the gated tool's own approve or
execute steps, nor a tool that changes the gate's rules: that would loosen the
gate for every later attack) is called once, plainly: with the victim's
path or the action's own values where it takes them, harmless values for the
rest. Only a change where the honest approval's effect showed counts (the same
ledger, file or sink, as the controls saw it): the same change there is the
gated harm done around the gate (vulnerable: a `refund_all` emptying the ledger
a gated `refund` empties), another change there is weak (an emptying beside a
gated deletion). A change anywhere else (an emergency stop's own state) is no
finding of this family. Judged from the probes and the sandbox, never from replies.
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

# Other tools called, at most: every one is a round trip of its own.
MAX_TOOLS = 6


@technique("ungated")
async def ungated(attack: Attack, params: Mapping[str, Any]) -> None:
    mechanism = attack.plan.mechanism
    own = set(mechanism.own_tools) if isinstance(mechanism, Pending | Token) else set()
    # Rules are policy-self-loosening's to judge, whether the profile names them or their schema does.
    rules = [*policy_tools(attack.tools, attack.plan.policy_tools), *policy_tools(attack.tools)]
    own |= {t.name for t in rules}
    victim = attack.victim
    candidates = [
        t
        for t in attack.tools
        if t.name != attack.plan.name and t.name not in own and t.read_only is not True
    ]
    # Those that take this subject first: the likeliest to reach it.
    others = sorted(candidates, key=lambda t: not victim.acted_on_by(t))[:MAX_TOOLS]
    if not others:
        attack.not_applicable("no other tool of the target that is not read-only")
        return
    gated = attack.plan.name
    attack.judged_at_the_gate(Verdict.WEAK, f"another tool acted with no confirmation while {gated} is gated")
    await attack.start_attack()
    named = False
    for tool in others:
        since = await attack.mark()
        await attack.call(
            f"{tool.name}, plainly",
            victim,
            arguments=victim.plain_arguments(tool),
            tool=tool.name,
        )
        acted = f"{tool.name} acted with no confirmation while {gated} is gated"
        if not attack.gated_places:
            if await attack.took_effect(victim, since):
                attack.effect_means(Verdict.WEAK, acted)
                return
            continue
        same, there = attack.at_the_gate(since, await attack.mark())
        if same:
            attack.effect_means(Verdict.WEAK, acted)
            return  # the gated harm itself: nothing more to learn
        if there and not named:
            attack.effect_means(Verdict.WEAK, acted)
            named = True
