"""`url-abandoned`: a URL flow the person never completes must end, refused, within its bound.

The client answers `accept` and nobody opens the page. The retry must answer
within the harness's round-trip bound (another question, or a refusal), not
wait for a person who never comes: a hang is `weak`. The client then gives up
(`cancel`), and only after that the person opens the page and completes it: an
action that still happens was taken for a call the client had abandoned
(`vulnerable`, seen through the effect).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio

from ..channels.human import HumanFailed
from ..channels.url_flow import PERSON
from ..models import Outcome, Verdict
from . import technique
from ._url import asked
from .base import Attack

# After the late completion, how long an action the server still takes is waited for.
_LATE_LOOKS, _LATE_PAUSE = 10, 0.1


@technique("url-abandoned")
async def url_abandoned(attack: Attack, params: Mapping[str, Any]) -> None:
    first = await asked(attack)
    if first is None or attack.pages is None:
        return
    await attack.start_attack()
    state = first.response.request_state
    retry = await attack.call(
        "accept; the person never opens the page",
        attack.victim,
        state=state,
        responses=first.answer("accept"),
    )
    bound = attack.primary.call_timeout
    if retry.outcome is Outcome.TRANSPORT:
        attack.finding(
            Verdict.WEAK,
            f"the retry of a flow nobody completed did not answer within {bound:g}s: it waits for a person "
            "who may never come, and the client hangs with it",
        )
    elif retry.outcome is Outcome.INPUT_REQUIRED:
        state = retry.request_state
    if attack.primary.alive:
        await attack.call(
            "cancel: the client gives up", attack.victim, state=state, responses=first.answer("cancel")
        )
    try:
        await attack.pages.open(first.url, PERSON, complete=True)
    except HumanFailed as exc:
        attack.note(f"the person, arriving late, could not open the page: {exc}")
        return
    for _ in range(_LATE_LOOKS):
        if await attack.since_start():
            attack.effect_means(Verdict.VULNERABLE, "the action happened after the client had given up on it")
            return
        await anyio.sleep(_LATE_PAUSE)
