"""Benign twins: an input attack's call made again with a harmless value of the same shape.

A hostile value refused in words that name no concern of a gate ("'.' is not a
regular file", the SDK's bare "Error executing tool delete_file") does not say
by itself that the server's check refused it: the harness's own call may have
been wrong. Its twin says which: the same tool, the same arguments, a harmless
value of the same shape, sent before the attack proper. A twin that reaches the
gate (it asks, a preview hands out a handle, the gate's own check takes it)
shows the call was right, so the hostile value's refusal is the tool's check;
a twin that fails too leaves the attack inconclusive (the `Twin` part, techniques/_twin.py).

The twin is setup, never judged: its question is left unanswered (cancelled on a
legacy connection, where it holds the call open), its handle is never redeemed.
A token or id attack (token-forgery) has the opposite twin: the same confirming
call with the real token or id a preview of another use (the decoy) handed out,
redeemed for that use before the attack proper; taken by the gate, it shows the
confirming call was right (`redeemed_twin`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations import AgentFlow, HumanFailed, as_flow, replies
from ..models import Outcome, Response, Said
from ._flows import AttackChannel
from .base import Attack


async def send_twin(attack: Attack, value: str) -> None:
    """Send `value` as the attack's call would carry its hostile one, and record how far it got."""
    flow = as_flow(attack.plan.mechanism)
    label = "benign twin: the same call with a harmless value of the same shape"
    if flow is None:
        exchange = await attack.exchange(label, value)
        attack.benign_twin(value, [exchange], _asked(exchange.response))
        if exchange.response.outcome is Outcome.INPUT_REQUIRED and attack.primary.legacy:
            # A legacy question holds the call open: the person cancels it before the attack.
            response = exchange.response
            cancel = attack.reply(response, "cancel")
            await attack.call(
                "cancel the twin's question", value, state=response.request_state, responses=cancel
            )
        return
    if flow.kind == "waits":
        return  # its one call waits for the person: a twin would be a whole approval
    channel = AttackChannel(attack)
    arguments = attack.arguments(value)
    if flow.kind == "flag":
        # One call with the flag is the whole flow: the gate's own check taking it is reaching it.
        response = await flow.confirm(channel, arguments, None)
        reached = "was taken by the tool with the flag" if replies.said(response) is Said.ACTED else ""
        attack.benign_twin(value, channel.exchanges, reached)
        return
    shown = await flow.preview(channel, arguments)
    reached = f"was previewed and handed {shown.field or 'a handle'}" if shown.handle is not None else ""
    attack.benign_twin(value, channel.exchanges, reached or _asked(shown.response))


def _asked(response: Response) -> str:
    return "was asked about" if response.outcome is Outcome.INPUT_REQUIRED and response.questions else ""


async def redeemed_twin(
    attack: Attack, flow: AgentFlow, channel: AttackChannel, arguments: Mapping[str, Any], handle: str
) -> None:
    """A token or id attack's twin: the same confirming call with a real value of the shape, redeemed in setup.

    `handle` is what a preview of another use (the decoy) handed out, redeemed for that use
    as the agent would: taken by the gate, it shows the confirming call was right, so a forged
    value refused with no effect, in whatever words, was refused by the tool's own check.
    """
    before = len(channel.exchanges)
    try:
        response = await flow.confirm(channel, arguments, handle, as_agent=True)
    except HumanFailed as exc:
        attack.note(f"the benign twin (the decoy's own {flow.kind}) could not be redeemed: {exc}")
        response = None
    taken = response is not None and replies.said(response) is Said.ACTED
    reached = (
        f"was taken by the gate (the decoy's own {flow.kind}, redeemed before the attack)" if taken else ""
    )
    attack.benign_twin(handle, channel.exchanges[before:], reached)
