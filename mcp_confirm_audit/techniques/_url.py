"""What the URL-mode families share: round one's URL-mode question, and answering it.

Each family drives the question itself, so `person_completes` is off: nobody
completes the page unless the technique says who does (`Pages.open`).
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp import types

from ..channels.url_flow import url_questions
from ..confirmations import as_flow
from ..models import Response
from .base import Attack


@dataclass(frozen=True, slots=True)
class Asked:
    """Round one of a URL-mode question: the response, its key and the page's URL."""

    response: Response
    key: str
    url: str

    def answer(self, action: str) -> dict[str, types.ElicitResult]:
        """The client's answer: `accept` is the person's consent to open the page, nothing more."""
        return {self.key: types.ElicitResult(action=action)}  # type: ignore[arg-type]


async def asked(attack: Attack) -> Asked | None:
    """Round one, asked with nobody to complete the page; None (not applicable, or set up wrong) if it is no URL."""
    if (flow := as_flow(attack.plan.mechanism)) is not None:
        attack.not_applicable(f"the tool confirms with a {flow.kind} flow, not URL-mode elicitation")
        return None
    if attack.pages is None:
        attack.not_applicable("no page can be opened here")
        return None
    attack.person_completes = False
    first = await attack.ask(attack.victim)
    if attack.failed:
        return None
    urls = url_questions(first)
    if not urls:
        attack.not_applicable("the tool asks with a form, not URL-mode elicitation: there is no page to open")
        return None
    key, url = next(iter(urls.items()))
    return Asked(first, key, url)
