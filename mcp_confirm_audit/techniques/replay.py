"""`replay`: one approval, redeemed twice.

The SDK's boundary binds and expires request state but never spends it, so
inside its lifetime the same state verifies every time it is presented. Only a
server-side ledger stops a second redemption.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..sandbox import identity_of
from . import technique
from .base import Attack


@technique("replay")
async def replay(attack: Attack, params: Mapping[str, Any]) -> None:
    victim = attack.case.victim
    first = await attack.ask(victim)
    if attack.failed:
        return
    yes = attack.accept(first, victim)
    mode = params["mode"]
    if mode == "after-success":
        # A hard link keeps the victim's inode alive, so it can be put back
        # with the very identity the user confirmed (device, inode, size,
        # mtime): then only a ledger, not an identity re-check, can refuse.
        keep = attack.sandbox.logs / f"{attack.case.name}.victim-keep"
        os.link(victim, keep)
        done = await attack.call("honest redemption", victim, state=first.request_state, responses=yes)
        if identity_of(victim) is not None:
            attack.setup_failed(f"the honest redemption did not take effect ({done.outcome}: {done.text})")
            return
        os.link(keep, victim)
        attack.note("victim put back with its original identity after the honest redemption")
    else:
        action = "decline" if mode == "decline-then-accept" else "cancel"
        await attack.call(f"{action} the question", victim, state=first.request_state, responses=attack.reply(first, action))
        if identity_of(victim) is None:
            attack.note(f"the {action} itself removed the victim (see the consent family); re-created it")
            attack.restore_victim()
    attack.start_attack()
    await attack.call("redeem the same state again, accepting", victim, state=first.request_state, responses=yes)
