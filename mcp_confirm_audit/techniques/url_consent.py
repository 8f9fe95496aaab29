"""`url-consent`: an `accept` to a URL-mode question is consent to open the page, not its completion.

The client answers `accept` and nobody opens the page; it retries once more, as
a client polling for the result would. The action must not happen: the server
answers another question (the same page), or refuses, until the person
completed the page.

An MRTR question approved somewhere else (`confirmation.mrtr.human`: the
server posts the person a link) is the same consent without a page in the
question: the client accepts with the honest answer and nobody follows the
link; the action must not happen until the person did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations.honest import approved_elsewhere
from ..models import Outcome
from . import technique
from ._url import asked
from .base import Attack


@technique("url-consent")
async def url_consent(attack: Attack, params: Mapping[str, Any]) -> None:
    if approved_elsewhere(attack.plan.mechanism):
        await _nobody_followed_the_link(attack)
        return
    first = await asked(attack)
    if first is None:
        return
    await attack.start_attack()
    retry = await attack.call(
        "accept; nobody opened the page",
        attack.victim,
        state=first.response.request_state,
        responses=first.answer("accept"),
    )
    if retry.outcome is Outcome.INPUT_REQUIRED:
        await attack.call(
            "accept again, as a client polling for the result; still nobody opened the page",
            attack.victim,
            state=retry.request_state,
            responses=first.answer("accept"),
        )


async def _nobody_followed_the_link(attack: Attack) -> None:
    """The client accepts, twice, a question the person approves elsewhere; nobody takes their steps."""
    attack.person_completes = False
    first = await attack.ask(attack.victim)
    if attack.failed:
        return
    await attack.start_attack()
    retry = await attack.call(
        "accept; nobody followed the link sent to the person",
        attack.victim,
        state=first.request_state,
        responses=attack.accept(first, attack.victim),
    )
    if retry.outcome is Outcome.INPUT_REQUIRED:
        await attack.call(
            "accept again, as a client polling for the result; still nobody followed the link",
            attack.victim,
            state=retry.request_state,
            responses=attack.accept(retry, attack.victim),
        )
