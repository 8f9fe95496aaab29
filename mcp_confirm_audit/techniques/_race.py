"""Redeeming one approval several times, at once or across processes, with the victim kept in place.

Shared by the double-spend and cross-replica families. The approval is
minted on one connection and redeemed on others, all at once (a task each,
started together); a `Restorer` puts the victim back after every effect, so
each redemption that got past the single-use check acts and is counted.
Afterwards the same approval is replayed once, sequentially, on every process
that took part: its refusal is what that process's single-use guard says, and
the verdict compares the losers' refusals with it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

from ..models import Exchange
from ..oracle.restorer import Restorer
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
    victim = attack.victim
    first = await attack.ask(victim, connection=minted_on, label=f"ask on {minted_on.name}")
    if attack.failed:
        return
    yes = attack.accept(first, victim)
    answers: list[dict[str, Any]] = [yes] * len(redeem_on)
    if decline_first:
        answers[0] = attack.reply(first, "decline")
    racing: list[tuple[Exchange, Connection]] = []

    async def redeem(number: int, conn: Connection, responses: dict[str, Any]) -> None:
        action = "decline" if responses is not yes else "accept"
        label = f"redemption {number} of {len(redeem_on)} ({action}) on {conn.name}"
        exchange = await attack.exchange(
            label, victim, state=first.request_state, responses=responses, connection=conn
        )
        racing.append((exchange, conn))

    await attack.start_attack()
    keeper = (
        Restorer(victim, attack.sandbox.keep / attack.case.name)
        if isinstance(victim, Path)
        else EffectCounter(attack)
    )
    with keeper as restorer:
        async with anyio.create_task_group() as group:
            for number, (conn, responses) in enumerate(zip(redeem_on, answers, strict=True), start=1):
                group.start_soon(redeem, number, conn, responses)
        taken_racing = await restorer.counted()
        replay_on: dict[object, Exchange] = {}
        for conn in [minted_on, *redeem_on]:
            if _process(conn) not in replay_on:
                replay_on[_process(conn)] = await attack.exchange(
                    f"sequential replay on {conn.name}: what its single-use guard says",
                    victim,
                    state=first.request_state,
                    responses=yes,
                    connection=conn,
                )
    taken = await restorer.counted()
    for failure in restorer.failures:
        attack.setup_failed(failure)
    pairs = [(exchange, replay_on[_process(conn)]) for exchange, conn in racing]
    counted_by = "restorer" if isinstance(victim, Path) else "probes"
    attack.single_use(pairs, taken_racing, taken, if_none_taken, counted_by)


class EffectCounter:
    """For an action that names no file: nothing to put back, every effect stays and is counted.

    A second payment is a new row, not the same file gone twice. One effect may
    show in several places (a row of `list_payments` and a request at the sink;
    a joint's angle and a row in its move log), so the count is the most new
    or changed items any one place shows: rows of one list, requests at the
    sink, a file.
    """

    def __init__(self, attack: Attack) -> None:
        self._attack = attack
        self.failures: list[str] = []

    def __enter__(self) -> EffectCounter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    async def counted(self) -> int:
        changes = await self._attack.since_start()
        items = {_item(path) for path in changes if ":" in path.split("/", 1)[0] or path.startswith("sink")}
        for path in changes:
            # A file a probe reads by rows is counted by its rows, not once more as a file.
            inside = path.removeprefix("root/")
            if path.startswith(("root/", "outside/", "root-evil/")) and not any(
                item.startswith(f"file:{inside}") for item in items
            ):
                items.add(path)
        places: dict[str, set[str]] = {}
        for item in items:
            places.setdefault(_ROW.sub("[*]", item), set()).add(item)
        return max((len(found) for found in places.values()), default=0)


_ROW = re.compile(r"\[\d+\]")


def _item(path: str) -> str:
    """A change named down to the first list item it is in: one row, one request, one payment."""
    cut = path.find("]")
    return path[: cut + 1] if cut >= 0 else path


def _process(conn: Connection) -> object:
    """Connections to one process share its endpoint (a URL, an in-process server); over stdio, itself."""
    endpoint = conn.endpoint
    if isinstance(endpoint, str):
        return endpoint
    return id(endpoint if endpoint is not None else conn)
