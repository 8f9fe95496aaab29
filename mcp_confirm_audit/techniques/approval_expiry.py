"""`approval-expiry`: what a person handed over, redeemed after the approval's lifetime.

Only when the profile says how to shorten the lifetime (`ttl_flag`, `ttl`) can
this be tested without waiting minutes: a process with that lifetime is
started, an approval redeemed inside it proves the flow works there (one whose
approval and redemption took longer than the lifetime proves nothing, and is tried
again), and then one redeemed after it must be refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from . import ANY, technique
from ._elsewhere import approved, person_flow, redeem
from ._flows import AttackChannel
from ._lifetime import InTime, approved_in_time
from .base import Attack

# Past the lifetime by this much (and by half the lifetime), as for the expiry family.
_MARGIN = 0.3


@technique("approval-expiry", mechanisms=ANY, opens={"short_lived"})
async def approval_expiry(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = person_flow(attack, "person's approval to redeem late")
    if flow is None:
        return
    found = await attack.peer(attack.peers.short_lived)
    if found is None:
        return
    conn, ttl = found
    channel = AttackChannel(attack, conn)
    words = InTime(
        label="redeemed-in-time",
        redeemed="control: redeemed at once",
        acted="an approval redeemed inside the lifetime",
        steps="approval and redemption",
        could="approval could be redeemed",
        why="a slow or loaded machine, or a slow person's step",
    )
    if not await approved_in_time(attack, flow, channel, conn, ttl, words):
        return
    victim = await attack.subject_on(conn)
    if victim is None:
        return
    args = attack.arguments(victim)
    got = await approved(attack, flow, channel, args)
    if got is None:
        return
    late = ttl + max(_MARGIN, ttl / 2)
    await anyio.sleep(late)
    attack.note(f"redeemed {late:g}s after the person approved, past a lifetime of {ttl:g}s")
    await attack.start_attack()
    await redeem(flow, channel, args, *got, "the person's approval redeemed after its lifetime")
