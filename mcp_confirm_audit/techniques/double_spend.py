"""`double-spend`: one approval redeemed many times at once.

A sequential replay meets a ledger that has already spent the approval; a
race meets it halfway through spending, where a check-then-delete lets every
redemption in. The redemptions go over separate connections where the target
has them (HTTP clients, in-process clients) and as concurrent requests on the
one connection over stdio, where a process has exactly one. At most one may
act; the losers must be refused by the same guard that refuses a sequential
replay, or only a later check (the file already gone) saved the target.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import technique
from ._race import redeem_together
from .base import Attack


@technique("double-spend")
async def double_spend(attack: Attack, params: Mapping[str, Any]) -> None:
    connections = await attack.peer(lambda: attack.peers.same_process(attack.peers.redemptions))
    if connections is None:
        return
    mode = params["mode"]
    if mode not in ("accepts", "decline-and-accepts"):
        raise ValueError(f"double-spend: unknown mode {mode!r}")
    decline = mode == "decline-and-accepts"
    # A decline may win the race honestly: then nothing happens, and that is right.
    await redeem_together(
        attack,
        attack.primary,
        connections,
        decline_first=decline,
        if_none_taken="refused" if decline else "inconclusive",
    )
