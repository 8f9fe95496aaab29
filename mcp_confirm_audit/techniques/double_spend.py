"""`double-spend`: one approval redeemed many times at once.

A sequential replay meets a ledger that has already spent the approval; a
race meets it halfway through spending, where a check-then-delete lets every
redemption in. The redemptions go over separate connections where the target
has them (HTTP clients, in-process clients) and as concurrent requests on the
one connection over stdio, where a process has exactly one. At most one may
act; the losers must be refused by the same guard that refuses a sequential
replay, or only a later check (the file already gone) saved the target.

What a person on a channel of their own handed over (a pending id they
approved, a signed approval) is raced the same way: the person approves once,
then the agent redeems it on every connection at once. A decline has nothing
to race there: the person declines on their own channel, and nothing is handed
over.

Over the back channel (a legacy connection) a question is the server's own
request, answered once: there is no approval to present twice. What can be
spent twice is the person's one answer. The first call asks and is answered
(accept, or decline); then the other calls go at once, and every question
they ask is answered accept. The victim is put back after every effect, and
the effects are counted against the questions the person accepted: a call
that acted on another call's approval is the finding. An action whose one
effect changes several items is counted in units of what the first accepted
call changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import anyio

from ..confirmations import as_flow
from ..models import Exchange, Outcome
from ..target.driver import Connection
from . import ANY, technique
from ._elsewhere import approved, person_flow
from ._elsewhere import redeem as redeem_handed_over
from ._flows import AttackChannel
from ._params import Params
from ._race import redeem_together, redeemed_at_once
from .base import Attack


class DoubleSpendParams(Params):
    mode: Literal["accepts", "decline-and-accepts"]


@technique("double-spend", mechanisms=ANY, premise_asked=True, params=DoubleSpendParams)
async def double_spend(attack: Attack, params: Mapping[str, Any]) -> None:
    mode = params["mode"]
    if mode not in ("accepts", "decline-and-accepts"):
        raise ValueError(f"double-spend: unknown mode {mode!r}")
    decline = mode == "decline-and-accepts"
    if as_flow(attack.plan.mechanism) is not None:
        await _handed_over_and_redeemed_at_once(attack, decline_first=decline)
        return
    connections = await _redeeming(attack)
    if connections is None:
        return
    if attack.primary.legacy:
        await _one_answer_spent_twice(attack, connections, decline_first=decline)
        return
    # A decline may win the race honestly: then nothing happens, and that is right.
    await redeem_together(
        attack,
        attack.primary,
        connections,
        decline_first=decline,
        if_none_taken="refused" if decline else "inconclusive",
    )


async def _redeeming(attack: Attack) -> list[Connection] | None:
    """The connections to redeem on at once, all to the approval's process (None: none could be opened)."""
    found: list[Connection] | None = await attack.peer(
        lambda: attack.peers.same_process(attack.peers.redemptions)
    )
    return found


async def _handed_over_and_redeemed_at_once(attack: Attack, *, decline_first: bool) -> None:
    """The person approves once; the agent redeems what they handed over on every connection at once."""
    if decline_first:
        attack.not_applicable(
            "a person who declines does it on their own channel and hands nothing over: no decline races "
            "the redemptions of their approval"
        )
        return
    flow = person_flow(attack, "person's approval to redeem at once")
    if flow is None:
        return
    connections = await _redeeming(attack)
    if connections is None:
        return
    channel, victim = AttackChannel(attack), attack.victim
    arguments = attack.arguments(victim)
    got = await approved(attack, flow, channel, arguments)
    if got is None:
        return
    handle, saved = got

    async def redeem(number: int, conn: Connection) -> Exchange:
        on = AttackChannel(attack, conn)
        label = (
            f"sequential replay on {conn.name}: what its single-use guard says"
            if number == 0
            else f"redemption {number} of {len(connections)} of the person's approval on {conn.name}"
        )
        await redeem_handed_over(flow, on, arguments, handle, saved, label)
        return on.exchanges[-1]

    await redeemed_at_once(attack, attack.primary, connections, redeem)


async def _one_answer_spent_twice(attack: Attack, connections: list[Any], *, decline_first: bool) -> None:
    victim = attack.victim
    first = await attack.ask(victim, label="the first call asks")
    if attack.failed:
        return
    await attack.start_attack()
    accepted = declined = 0
    with victim.counter(attack.since_start, attack.items_per_effect) as restorer:
        accepting, which = first, "the first call"
        if decline_first:
            await attack.call(
                "the person declines the first call",
                victim,
                state=first.request_state,
                responses=attack.reply(first, "decline"),
            )
            # What one accepted call changes is learned from one honest call of its own, alone,
            # after the decline: a wake that sends three packets is one effect, not three.
            declined = await restorer.counted()
            accepting = await attack.call("one more call, alone, to learn what one effect is", victim)
            which = "that call"
        if accepting.outcome is Outcome.INPUT_REQUIRED and accepting.questions:
            accepted += 1
            await attack.call(
                f"the person accepts {which}",
                victim,
                state=accepting.request_state,
                responses=attack.accept(accepting, victim),
            )
        # One honest effect may change several items (a collection and the links in it): what
        # the first accepted call changed is what one effect is counted as.
        counted = await restorer.counted()
        one = max(counted - declined if decline_first else counted, 1)
        others = connections[1:]

        async def another(number: int, conn: Any) -> None:
            nonlocal accepted
            label = f"call {number} of {len(others)} on {conn.name}, at once"
            asked = await attack.call(label, victim, connection=conn)
            while asked.outcome is Outcome.INPUT_REQUIRED and asked.questions:
                accepted += 1
                asked = await attack.call(
                    f"{label}: the person accepts its own question",
                    victim,
                    state=asked.request_state,
                    responses=attack.accept(asked, victim),
                    connection=conn,
                )

        async with anyio.create_task_group() as group:
            for number, conn in enumerate(others, start=1):
                group.start_soon(another, number, conn)
        taken = -(-(await restorer.counted()) // one)
    for failure in restorer.failures:
        attack.setup_failed(failure)
    if one > 1:
        attack.note(f"one effect changed {one} items (the first accepted call's); the effects are counted so")
    attack.approvals(len(connections), accepted, taken)
