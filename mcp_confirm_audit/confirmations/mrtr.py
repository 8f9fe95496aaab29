"""`mrtr`: the call answers `input_required` with a question; the retry carries the answer.

What exists today: the MRTR techniques drive its rounds themselves (they need
the form, the state and the answers). Here it is only described and detected,
so every other family knows what it is looking at.

With `human` (the profile's `confirmation.mrtr.human`), the question is
approved somewhere else: the server sends the person a link (a webhook) and
waits for the client's retry with its requestState. The person's steps are
taken once per question, before the client's first retry that accepts it
(`channels/url_flow.Pages`, as a URL-mode page is completed), so every MRTR
family's honest retry follows a real approval.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..channels.human import Person
from ..models import Outcome, Response


@dataclass(frozen=True, slots=True)
class Mrtr:
    tool: str = ""
    source: str = "detected"
    # The person's steps on a channel of their own before the retry (None: answered in the client).
    human: Person | None = None

    @property
    def kind(self) -> str:
        return "mrtr"

    def describe(self) -> str:
        if self.human is not None:
            return (
                "mrtr: tools/call answers input_required and a requestState; the person approves on a "
                "channel of their own before the retry"
            )
        return "mrtr: tools/call answers input_required with a question and a requestState"

    def for_tool(self, tool: str) -> Mrtr:
        return replace(self, tool=tool)

    @property
    def own_tools(self) -> tuple[str, ...]:
        return ()

    @property
    def own_arguments(self) -> tuple[str, ...]:
        return ()


def asks(response: Response) -> bool:
    return response.outcome is Outcome.INPUT_REQUIRED and bool(response.questions)
