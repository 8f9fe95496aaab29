"""`url-preauthenticated`: the URL alone must not let whoever holds it complete the flow.

The agent (the client, the model behind it) sees the URL. It opens the page
itself, with no credential of the person's, submits what the page offers, and
then answers `accept`. A careful server asks who opened the page (a session, a
sign-in) and the action does not happen; if it happens, the URL was
pre-authenticated: the agent approved its own action (MUST NOT).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..channels.human import HumanFailed
from ..channels.url_flow import AGENT
from ..models import Verdict
from . import technique
from ._url import asked
from .base import Attack


@technique("url-preauthenticated")
async def url_preauthenticated(attack: Attack, params: Mapping[str, Any]) -> None:
    first = await asked(attack)
    if first is None or attack.pages is None:
        return
    await attack.start_attack()
    try:
        seen = await attack.pages.open(first.url, AGENT, complete=True)
    except HumanFailed as exc:
        attack.setup_failed(f"the agent could not open the page: {exc}")
        return
    if not seen.completed:
        # The page turned them away: an effect now is the accept alone acting (url-consent's finding).
        attack.effect_means(Verdict.VULNERABLE, "the page refused the agent, yet the accept alone acted")
    else:
        attack.note("the page took the agent's submission without asking who it was")
    await attack.call(
        "accept, after the agent opened the page itself",
        attack.victim,
        state=first.response.request_state,
        responses=first.answer("accept"),
    )
