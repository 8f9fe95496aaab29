"""`url-consent`: an `accept` to a URL-mode question is consent to open the page, not its completion.

The client answers `accept` and nobody opens the page; it retries once more, as
a client polling for the result would. The action must not happen: the server
answers another question (the same page), or refuses, until the person
completed the page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models import Outcome
from . import technique
from ._url import asked
from .base import Attack


@technique("url-consent")
async def url_consent(attack: Attack, params: Mapping[str, Any]) -> None:
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
