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
"""

from __future__ import annotations

from ..confirmations import as_flow, replies
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
