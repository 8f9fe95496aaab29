"""`approval-expiry`: what a person handed over, redeemed after the approval's lifetime.

Only when the profile says how to shorten the lifetime (`ttl_flag`, `ttl`) can
this be tested without waiting minutes: a process with that lifetime is
started, an approval redeemed inside it proves the flow works there (one whose
approval and redemption took longer than the lifetime proves nothing, and is tried
again), and then one redeemed after it must be refused.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import anyio

from . import ANY, technique
from ._elsewhere import approved, person_flow, redeem
from ._flows import AttackChannel
from ._lifetime import TRIES, never_in_time, try_again
from .base import Attack

# Past the lifetime by this much (and by half the lifetime), as for the expiry family.
_MARGIN = 0.3


@technique("approval-expiry", mechanisms=ANY)
async def approval_expiry(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = person_flow(attack, "person's approval to redeem late")
    if flow is None:
        return
    found = await attack.peer(attack.peers.short_lived)
    if found is None:
        return
    conn, ttl = found
    channel = AttackChannel(attack, conn)
    for attempt in range(1, TRIES + 1):
        label = "redeemed-in-time" if attempt == 1 else f"redeemed-in-time-{attempt}"
        control = await attack.another(label, connection=conn)
        if control is None:
            return
        control_args = attack.arguments(control)
        # From before the preview to after the redemption: the most the server can have seen pass.
        started = time.monotonic()
        got = await approved(attack, flow, channel, control_args)
        if got is None:
            return
        before = await attack.mark()
        done = await redeem(
            flow, channel, control_args, *got, f"control: redeemed at once (lifetime {ttl:g}s)"
        )
        took = time.monotonic() - started
        if await attack.took_effect(control, before):
            break
        failure = f"an approval redeemed inside the lifetime did not take effect ({done.text[:160]})"
        if not try_again(attack, took, ttl, failure, "approval and redemption"):
            return
    else:
        never_in_time(
            attack, ttl, "approval could be redeemed", "a slow or loaded machine, or a slow person's step"
        )
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
