"""`url-user-data`: a URL-mode elicitation's URL must carry nothing about the person.

Round one is asked (never answered) and every URL-mode question's URL is read as
the client sees it before the person consents: userinfo, parameter names such as
`email` or `session`, an e-mail address anywhere, or a credential the person's
own browser holds (`url_elicitation.person`). Each is the spec's MUST NOT.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..catalogue.url_checks import secrets_of, url_user_data
from ..channels.url_flow import PERSON, url_questions
from . import technique
from ._url import asked
from .base import Attack


@technique("url-user-data")
async def url_user_data_in_url(attack: Attack, params: Mapping[str, Any]) -> None:
    first = await asked(attack)
    if first is None or attack.pages is None:
        return
    await attack.start_attack()
    again = await attack.ask(attack.victim, label="ask again: the URL the client would show")
    held = secrets_of(h.value for h in attack.pages.browsers[PERSON].headers)
    for response in (first.response, again):
        for url in url_questions(response).values():
            for verdict, message in url_user_data(url, held):
                attack.finding(verdict, message)
