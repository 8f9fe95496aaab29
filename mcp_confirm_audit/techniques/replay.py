"""`replay`: one approval, redeemed twice.

The SDK's boundary binds and expires request state but never spends it, so
inside its lifetime the same state verifies every time it is presented. Only a
server-side ledger stops a second redemption.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..oracle.sandbox import identity_of
from ..target.driver import Connection
from . import technique
from .base import Attack


@technique("replay")
async def replay(attack: Attack, params: Mapping[str, Any]) -> None:
    await spend_then_replay(attack, params["mode"], spend_on=attack.primary, replay_on=attack.primary)


async def spend_then_replay(
    attack: Attack, mode: str, *, spend_on: Connection, replay_on: Connection
) -> None:
    """Spend an approval on one connection, then present it again on another (or the same)."""
    victim = attack.victim
    first = await attack.ask(victim, connection=spend_on)
    if attack.failed:
        return
    yes = attack.accept(first, victim)
    if mode == "after-success" and not isinstance(victim, Path):
        # A second payment, message or move is an effect of its own; only a case file a setup
        # call staged ({path}) is put back, with its identity, so a replay has it to act on again.
        staged = attack.case.victim
        keep = attack.sandbox.keep / attack.case.name
        os.link(staged, keep)
        before = await attack.mark()
        done = await attack.call(
            "honest redemption", victim, state=first.request_state, responses=yes, connection=spend_on
        )
        if not await attack.took_effect(victim, before):
            attack.setup_failed(f"the honest redemption did not take effect ({done.outcome}: {done.text})")
            return
        if identity_of(staged) is None:
            os.link(keep, staged)
            attack.note("the case file put back with its original identity after the honest redemption")
    elif mode == "after-success":
        assert isinstance(victim, Path)
        # A hard link keeps the victim's inode alive, so it can be put back
        # with the very identity the user confirmed (device, inode, size,
        # mtime): then only a ledger, not an identity re-check, can refuse.
        keep = attack.sandbox.keep / attack.case.name
        os.link(victim, keep)
        done = await attack.call(
            "honest redemption", victim, state=first.request_state, responses=yes, connection=spend_on
        )
        if identity_of(victim) is not None:
            attack.setup_failed(f"the honest redemption did not take effect ({done.outcome}: {done.text})")
            return
        os.link(keep, victim)
        attack.note("victim put back with its original identity after the honest redemption")
    elif mode in ("decline-then-accept", "cancel-then-accept"):
        action = "decline" if mode == "decline-then-accept" else "cancel"
        await attack.call(
            f"{action} the question",
            victim,
            state=first.request_state,
            responses=attack.reply(first, action),
            connection=spend_on,
        )
        if isinstance(victim, Path) and identity_of(victim) is None:
            attack.note(f"the {action} itself removed the victim (see the consent family); re-created it")
            attack.restore_victim()
    else:
        raise ValueError(f"replay: unknown mode {mode!r}")
    await attack.start_attack()
    where = "" if replay_on is spend_on else f" on {replay_on.name}"
    await attack.call(
        f"redeem the same state again{where}, accepting",
        victim,
        state=first.request_state,
        responses=yes,
        connection=replay_on,
    )
