"""`mrtr`: the call answers `input_required` with a question; the retry carries the answer.

What exists today: the MRTR techniques drive its rounds themselves (they need
the form, the state and the answers). Here it is only described and detected,
so every other family knows what it is looking at.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..models import Outcome, Response


@dataclass(frozen=True, slots=True)
class Mrtr:
    tool: str = ""
    source: str = "detected"

    @property
    def kind(self) -> str:
        return "mrtr"

    def describe(self) -> str:
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
