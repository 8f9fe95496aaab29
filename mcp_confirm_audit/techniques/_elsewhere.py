"""What the out-of-band families share: a flow with a person, what the person handed over, and redeeming it.

A person who approves elsewhere hands the agent something (an evidence id, a
signed approval) or marks the action approved on the server's side (a link
followed). `approved` plays the person once and keeps what they saved;
`redeem` is the agent's confirming call with it, the person no longer
involved: what an agent can repeat, move to another action, or send late.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations import AgentFlow, HumanFailed
from ..models import Response
from ._flows import AttackChannel, flow_or_not_applicable, previewed
from .base import Attack


def person_flow(attack: Attack, what: str) -> AgentFlow | None:
    """The tool's flow whose person hands the agent an approval to redeem; else not applicable, saying why."""
    flow = flow_or_not_applicable(attack, what)
    if flow is None:
        return None
    if flow.hands_over is None:
        attack.not_applicable(
            f"{what}: nothing is handed over by a person on a channel of their own ({flow.describe()}); "
            "a pending or token flow whose profile gives the person's human: steps is"
        )
        return None
    if flow.approval_acts_alone:
        attack.not_applicable(
            f"{what}: the person's approval acts by itself, so the agent has nothing to redeem"
        )
        return None
    return flow


async def approved(
    attack: Attack, flow: AgentFlow, channel: AttackChannel, arguments: Mapping[str, Any]
) -> tuple[str, dict[str, str]] | None:
    """The preview, and the person's approval of it (nothing redeemed): its handle and what they saved."""
    shown = await previewed(attack, flow, channel, arguments)
    if shown is None or shown.handle is None:
        return None
    person = flow.hands_over
    assert person is not None
    handle = shown.handle
    values = {"id": handle, "challenge": handle, "token": handle}
    try:
        saved = await channel.human(f"the human approves {handle[:40]}", person.approve, values)
    except HumanFailed as exc:
        attack.setup_failed(f"the person's approval could not be given: {exc}")
        return None
    return handle, saved


async def redeem(
    flow: AgentFlow,
    channel: AttackChannel,
    arguments: Mapping[str, Any],
    handle: str,
    saved: Mapping[str, str],
    label: str,
) -> Response:
    """The agent's confirming call with what the person handed over, the person not asked again.

    A name the person never handed over (nobody answered) that only they can make (with their
    credential) is one the agent does not have: it sends it empty, never the harness's literal `{NAME}`.
    """
    call = flow.redemption(arguments, handle, saved)
    if call is None:
        raise HumanFailed(f"no call of the agent's redeems an approval here ({flow.describe()})")
    person = flow.hands_over
    if empty := [n for n in getattr(call[1], "unfilled", ()) if person is not None and person.withheld(n)]:
        for name in empty:
            channel.attack.note(
                f"the agent was handed no {{{name}}}, which only the person can make: it sends it empty"
            )
        call = flow.redemption(arguments, handle, {**dict.fromkeys(empty, ""), **saved})
        assert call is not None
    return await channel.call(label, *call)
