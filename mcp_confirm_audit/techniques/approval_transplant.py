"""`approval-transplant`: what a person handed over for one action redeemed for another.

Two uses of the action are previewed (another file, or the setup run again
with other values); the person approves the first only, and the agent
redeems that approval with the second's handle and arguments. The first is
never redeemed, so any effect is the second's: an action nobody approved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import ANY, technique
from ._elsewhere import approved, person_flow, redeem
from ._flows import AttackChannel, previewed
from .base import Attack


@technique("approval-transplant", mechanisms=ANY)
async def approval_transplant(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = person_flow(attack, "person's approval to move to another action")
    if flow is None:
        return
    channel = AttackChannel(attack)
    approved_one = await attack.another("approved-by-the-person")
    if approved_one is None:
        return
    if attack.arguments(approved_one) == attack.arguments(attack.victim):
        # The same call twice is one action: its approval redeemed again is replay's to judge.
        attack.setup_failed("no second use of the action with other arguments could be made")
        return
    got = await approved(attack, flow, channel, attack.arguments(approved_one))
    if got is None:
        return
    first, saved = got
    victim = attack.victim
    args = attack.arguments(victim)
    shown = await previewed(attack, flow, channel, args)
    if shown is None or shown.handle is None:
        return
    await attack.start_attack()
    # A token flow's approval is the person's answer with the challenge it answers (in one field, or
    # beside it in another): both are the first action's; a pending flow's is redeemed under this id.
    handle = first if flow.redeems_the_persons_answer else shown.handle
    await redeem(flow, channel, args, handle, saved, "the other action's approval redeemed for this one")
