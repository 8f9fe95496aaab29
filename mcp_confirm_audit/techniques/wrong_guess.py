"""`wrong-guess`: one wrong token or pending id sent before the honest one; the honest one must still work.

A confirmation that a single bad value spends (a token store that "locks" the
action on a wrong token, a pending inbox that cancels everything on an unknown
id) lets any caller that can make one wrong call cancel a person's approval: a
denial of service, weak. The wrong value has the handle's shape (same length,
same kind of character, one changed); the honest confirmation follows, the
person approving as they would. Effects are counted like a race's: the wrong
guess acting is vulnerable, the honest one acting is the approval working, and
nothing acting means the guess spent it.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from typing import Any

from ..confirmations import HumanFailed
from . import ANY, technique
from ._flows import AttackChannel, flow_or_not_applicable, previewed
from .base import Attack


@technique("wrong-guess", mechanisms=ANY)
async def wrong_guess(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = flow_or_not_applicable(attack, "token or pending id to guess at")
    if flow is None:
        return
    if not flow.approves_a_handle:
        attack.not_applicable(f"no token or id is handed out to guess at: {flow.describe()}")
        return
    if not flow.agent_presents_the_handle:
        attack.not_applicable("the pending id is presented by no call the agent can make (no execute step)")
        return
    channel, victim = AttackChannel(attack), attack.victim
    args = attack.arguments(victim)
    shown = await previewed(attack, flow, channel, args)
    if shown is None or shown.handle is None:
        return
    wrong = guessed(shown.handle)
    await attack.start_attack()
    with victim.counter(attack.since_start, attack.items_per_effect) as restorer:
        sent_before = len(channel.exchanges)
        await flow.confirm(channel, args, wrong, as_agent=True)
        guess = channel.exchanges[-1]
        taken_guessing = await restorer.counted()
        sent = channel.exchanges[sent_before:]
        if not any(wrong in json.dumps(e.request, ensure_ascii=False, default=str) for e in sent):
            # The agent's call names the staged item by another value (a saved staged id, where the
            # person approved an approval id): the wrong guess never reached the target, and what
            # came back is the honest call sent early, which says nothing of a guess.
            attack.not_applicable(
                f"the agent's call carries no {shown.field or 'handle'} to guess at: "
                f"{guess.request.get('name')}({json.dumps(guess.request.get('arguments') or {})[:120]})"
            )
            return
        try:
            await flow.confirm(channel, args, shown.handle)
        except HumanFailed as exc:
            attack.setup_failed(f"the honest confirmation after the wrong guess could not be made: {exc}")
            return
        honest = channel.exchanges[-1]
    taken = await restorer.counted()
    for failure in restorer.failures:
        attack.setup_failed(failure)
    attack.note(f"the wrong guess: {wrong!r} for {shown.field or 'the handle'} {shown.handle!r}")
    attack.single_use(
        [(guess, honest)], taken_guessing, taken, if_none_taken="burnt", counted_by=victim.counted_by
    )


def guessed(handle: str) -> str:
    """A value of `handle`'s shape that is not it: its last character changed within its own kind."""
    last = handle[-1:] or "0"
    for alphabet in (string.digits, "abcdef", string.ascii_lowercase, string.ascii_uppercase):
        if last in alphabet:
            break
    else:
        alphabet = string.ascii_letters + string.digits
    other = alphabet[(alphabet.index(last) + 1) % len(alphabet)] if last in alphabet else "x"
    return handle[:-1] + other
