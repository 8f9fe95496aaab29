"""`replay`: one approval, redeemed twice.

The SDK's boundary binds and expires request state but never spends it, so
inside its lifetime the same state verifies every time it is presented. Only a
server-side ledger stops a second redemption.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..target.driver import Connection
from . import technique
from ._params import Params
from .base import Attack


class ReplayParams(Params):
    mode: Literal["after-success", "decline-then-accept", "cancel-then-accept"]


@technique(
    "replay",
    mechanisms={"mrtr"},
    needs_state=(
        "a legacy question is the server's own elicitation/create request, answered once as the "
        "reply to it: there is no requestState to present again"
    ),
    premise_asked=True,
    params=ReplayParams,
)
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
    if mode == "after-success":
        # A hard link keeps what the user confirmed (the file's device, inode, size and mtime),
        # so it can be put back after the honest redemption: then only a ledger, not an identity
        # re-check, can refuse. A second payment or move is an effect of its own, counted anew.
        victim.keep()
        before = await attack.mark()
        done = await attack.call(
            "honest redemption", victim, state=first.request_state, responses=yes, connection=spend_on
        )
        if not await attack.took_effect(victim, before):
            attack.setup_failed(f"the honest redemption did not take effect ({done.outcome}: {done.text})")
            return
        if (put_back := victim.put_back()) is not None:
            attack.note(f"{put_back} after the honest redemption")
    elif mode in ("decline-then-accept", "cancel-then-accept"):
        action = "decline" if mode == "decline-then-accept" else "cancel"
        await attack.call(
            f"{action} the question",
            victim,
            state=first.request_state,
            responses=attack.reply(first, action),
            connection=spend_on,
        )
        if victim.gone():
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
