"""`token-replay`: the same token, or pending id, presented again after it was used or declined.

After success a victim file is put back with the identity it had (a hard
link kept its inode), so only a record of what was spent can refuse; an
action that names no file keeps its honest effect, and the attack proper
starts after it, so only a second effect counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import anyio

from ..confirmations import AgentFlow, HumanFailed
from ..models import Exchange
from ..target import race
from ..target.driver import Connection
from . import ANY, technique
from ._flows import AttackChannel, flow_or_not_applicable, person_declines
from ._params import Params
from .base import Attack


class TokenReplayParams(Params):
    mode: Literal["after-success", "raced", "after-decline"]


@technique("token-replay", mechanisms=ANY, params=TokenReplayParams)
async def token_replay(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = flow_or_not_applicable(attack, "token or pending id to replay")
    if flow is None:
        return
    if not flow.approves_a_handle:
        attack.not_applicable(f"nothing to replay: {flow.describe()}")
        return
    if not flow.agent_presents_the_handle:
        # The person's approval was the action: no call of the agent's presents the id again.
        attack.not_applicable("the pending id is presented by no call the agent can make (no execute step)")
        return
    if flow.redeems_the_persons_answer:
        # What is redeemed is the person's answer to the challenge, not the token: approval-replay.
        attack.not_applicable(
            f"the token is a challenge a person answers; approval-replay replays their answer: {flow.describe()}"
        )
        return
    channel, victim = AttackChannel(attack), attack.victim
    args = attack.arguments(victim)
    shown = await flow.preview(channel, args)
    if shown.handle is None:
        attack.setup_failed(f"the first call returned no token or id ({shown.response.text[:160]})")
        return
    if params["mode"] == "after-success":
        victim.keep()
        since = await attack.mark()
        try:
            done = await flow.confirm(channel, args, shown.handle)
        except HumanFailed as exc:
            attack.setup_failed(str(exc))
            return
        if not await attack.took_effect(victim, since):
            attack.setup_failed(f"the honest confirmation did not take effect ({done.text[:160]})")
            return
        if (put_back := victim.put_back()) is not None:
            attack.note(f"{put_back} after the honest confirmation")
    elif params["mode"] == "raced":
        await _raced(attack, flow, args, shown.handle)
        return
    elif params["mode"] == "after-decline":
        # Nobody said no when the step fails: what follows would judge nothing.
        declined = await person_declines(attack, flow, channel, shown.handle)
        if declined is None:
            return
        if not declined:
            attack.not_applicable(
                "no way to decline: a pending flow whose profile gives the human's decline command "
                "(confirmation: pending: human: decline: '...{id}...')"
            )
            return
    else:
        raise ValueError(f"token-replay: unknown mode {params['mode']!r}")
    await attack.start_attack()
    if params["mode"] == "after-success" and (again := _as_it_acted(flow, args, shown.handle, channel.saved)):
        # The agent sends again the very call that acted, with what the person handed it then (an
        # evidence id): without it, the person's part would be missing, not the single-use check tried.
        await channel.call("execute", *again)
        return
    await flow.confirm(channel, args, shown.handle, as_agent=True)


def _as_it_acted(
    flow: AgentFlow, args: Mapping[str, Any], handle: str, saved: Mapping[str, str]
) -> tuple[str, dict[str, Any]] | None:
    """The confirming call again with what the person handed over, where the agent's own lacks some of it."""
    alone, again = flow.redemption(args, handle, {}), flow.redemption(args, handle, saved)
    if alone is None or again is None or not getattr(alone[1], "unfilled", ()):
        return None
    return again if not getattr(again[1], "unfilled", ()) else None


async def _raced(attack: Attack, flow: AgentFlow, args: Mapping[str, Any], handle: str) -> None:
    """One approval redeemed by several calls at once; the victim put back after every effect."""
    if flow.approval_acts_alone:
        attack.not_applicable("the pending flow has no execute call to send twice")
        return
    if flow.redemption(args, handle, {}) is None:
        attack.not_applicable(f"nothing to race: {flow.describe()}")
        return
    try:  # the honest approval, once; then the call that redeems it raced, with what the person saved
        saved = await flow.approval(AttackChannel(attack), handle)
    except HumanFailed as exc:
        attack.setup_failed(str(exc))
        return
    call = flow.redemption(args, handle, saved)
    assert call is not None
    tool, sent = call
    conns = await attack.peer(lambda: attack.peers.same_process(attack.peers.redemptions))
    if conns is None:
        return
    victim = attack.victim
    racing: list[tuple[Exchange, Connection]] = []

    async def redeem(number: int, conn: Connection) -> None:
        race.announce(len(conns))  # all to the one process (same_process)
        label = f"redemption {number} of {len(conns)} on {conn.name}"
        racing.append(
            (await attack.exchange(label, victim, arguments=sent, tool=tool, connection=conn), conn)
        )

    await attack.start_attack()
    with victim.counter(attack.since_start, attack.items_per_effect) as restorer:
        async with anyio.create_task_group() as group:
            for number, conn in enumerate(conns, start=1):
                group.start_soon(redeem, number, conn)
        taken_racing = await restorer.counted()
        replay = await attack.exchange(
            "sequential replay: what the single-use check says", victim, arguments=sent, tool=tool
        )
    taken = await restorer.counted()
    for failure in restorer.failures:
        attack.setup_failed(failure)
    pairs = [(exchange, replay) for exchange, _ in racing]
    attack.single_use(pairs, taken_racing, taken, counted_by=victim.counted_by)
