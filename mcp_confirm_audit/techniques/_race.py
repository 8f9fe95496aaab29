"""Redeeming one approval several times, at once or across processes, with the victim kept in place.

Shared by the double-spend and cross-replica families. The approval (a state
and its answers, or what a person handed over) is minted on one connection
and redeemed on others, all at once (a task each, started together); a `Restorer` puts the victim back after every effect, so
each redemption that got past the single-use check acts and is counted. Each redemption
announces how many of them go to its process (`target/race.py`).
Afterwards the same approval is replayed once, sequentially, on every process
that took part: its refusal is what that process's single-use guard says, and
the verdict compares the losers' refusals with it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from ..models import Exchange
from ..target import race
from ..target.driver import Connection
from .base import Attack


async def redeem_together(
    attack: Attack,
    minted_on: Connection,
    redeem_on: Sequence[Connection],
    *,
    decline_first: bool = False,
    if_none_taken: str = "inconclusive",
) -> None:
    """One MRTR approval (a state and its answers) minted on `minted_on`, redeemed on each of `redeem_on` at once."""
    victim = attack.victim
    first = await attack.ask(victim, connection=minted_on, label=f"ask on {minted_on.name}")
    if attack.failed:
        return
    yes = attack.accept(first, victim)
    answers: list[dict[str, Any]] = [yes] * len(redeem_on)
    if decline_first:
        answers[0] = attack.reply(first, "decline")

    async def redeem(number: int, conn: Connection) -> Exchange:
        if number == 0:
            label, responses = f"sequential replay on {conn.name}: what its single-use guard says", yes
        else:
            responses = answers[number - 1]
            action = "decline" if responses is not yes else "accept"
            label = f"redemption {number} of {len(redeem_on)} ({action}) on {conn.name}"
        return await attack.exchange(
            label, victim, state=first.request_state, responses=responses, connection=conn
        )

    await redeemed_at_once(attack, minted_on, redeem_on, redeem, if_none_taken=if_none_taken)


async def redeemed_at_once(
    attack: Attack,
    minted_on: Connection,
    redeem_on: Sequence[Connection],
    redeem: Callable[[int, Connection], Awaitable[Exchange]],
    *,
    if_none_taken: str = "inconclusive",
) -> None:
    """`redeem(n, conn)` for n = 1.. on each of `redeem_on` at once, then once (n = 0) on every process.

    Whatever the approval is (a state and its answers, what a person handed over), the race and the
    sequential replays after it are the same, and so is their count: effects, put back after each.
    """
    victim = attack.victim
    racing: list[tuple[Exchange, Connection]] = []

    widths = Counter(_process(conn) for conn in redeem_on)

    async def one(number: int, conn: Connection) -> None:
        race.announce(widths[_process(conn)])  # how many go to its process: the race's width there
        racing.append((await redeem(number, conn), conn))

    await attack.start_attack()
    with victim.counter(attack.since_start, attack.items_per_effect) as restorer:
        async with anyio.create_task_group() as group:
            for number, conn in enumerate(redeem_on, start=1):
                group.start_soon(one, number, conn)
        taken_racing = await restorer.counted()
        replay_on: dict[object, Exchange] = {}
        for conn in [minted_on, *redeem_on]:
            if _process(conn) not in replay_on:
                replay_on[_process(conn)] = await redeem(0, conn)
    taken = await restorer.counted()
    for failure in restorer.failures:
        attack.setup_failed(failure)
    pairs = [(exchange, replay_on[_process(conn)]) for exchange, conn in racing]
    attack.single_use(pairs, taken_racing, taken, if_none_taken, victim.counted_by)


def _process(conn: Connection) -> object:
    """Connections to one process share its endpoint (a URL, an in-process server); over stdio, itself."""
    endpoint = conn.endpoint
    if isinstance(endpoint, str):
        return endpoint
    return id(endpoint if endpoint is not None else conn)
