"""`url-identity`: the person who completes the page must be the one who started the call.

Another user of the same server (`url_elicitation.other_person`: their browser's
session) opens the URL and completes the page, as in the spec's phishing
example; then the client answers `accept`. A careful server checks who opened
the page against who started the elicitation, and the action does not happen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..channels.human import HumanFailed
from ..channels.url_flow import OTHER_PERSON
from ..models import Verdict
from . import technique
from ._url import asked
from .base import Attack


@technique("url-identity")
async def url_identity(attack: Attack, params: Mapping[str, Any]) -> None:
    first = await asked(attack)
    if first is None or attack.pages is None:
        return
    if OTHER_PERSON not in attack.pages.browsers:
        attack.not_applicable(
            "no other person is known: set url_elicitation.other_person (the headers of another user's "
            'browser, e.g. {headers: {Cookie: "session=${BOB_SESSION}"}}) in the profile'
        )
        return
    await attack.start_attack()
    try:
        seen = await attack.pages.open(first.url, OTHER_PERSON, complete=True)
    except HumanFailed as exc:
        attack.setup_failed(f"the other person could not open the page: {exc}")
        return
    if not seen.completed:
        # The page turned them away: an effect now is the accept alone acting (url-consent's finding).
        attack.effect_means(
            Verdict.VULNERABLE, "the page refused the other person, yet the accept alone acted"
        )
    else:
        attack.note("the page took another person's approval")
    await attack.call(
        "accept, after another person completed the page",
        attack.victim,
        state=first.response.request_state,
        responses=first.answer("accept"),
    )
