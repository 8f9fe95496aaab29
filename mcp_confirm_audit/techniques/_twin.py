"""An input attack's benign twin, and its reading: what a refusal of the hostile value means."""

from __future__ import annotations

from dataclasses import dataclass

from ..confirmations import replies
from ..engine.reading import Reading, Seen, literal, quoted, reads
from ..models import Part, Response, Said


@dataclass(frozen=True, slots=True)
class Twin(Part):
    """An input attack's benign twin: the same call with a harmless value of the same shape.

    `exchanges` index the transcript's exchanges that were the twin's; `reached` says how it
    reached the gate (it asked, a preview handed out a handle, the gate's own check took it),
    or is empty when it did not: then the harness's call, not the server's check, may be
    what failed.
    """

    value: str
    exchanges: tuple[int, ...]
    reached: str = ""


@reads(Twin)
class ReadTwin(Reading[Twin]):
    def stands(self, part: Twin, seen: Seen, refusal: Response, why: str, said: str) -> str | None:
        if not (
            part.reached and replies.said(refusal) is Said.REFUSED and not replies.invalid_arguments(refusal)
        ):
            return None
        # Its benign twin, the same call with a harmless value, reached the gate: the call was right,
        # so what refused the hostile value, with no effect, is the tool's own check.
        if replies.bare_exception(refusal):
            why = "an exception inside the tool, whose reason the SDK's frame hides"
        return (
            f"refused the hostile value with no effect ({why}), while its benign twin "
            f"{literal(part.value)} {part.reached}: {said}"
        )

    def unshown(self, part: Twin, seen: Seen) -> str:
        if part.reached:
            return f" (its benign twin {literal(part.value)} {part.reached})"
        said = (
            quoted(seen.transcript.exchanges[part.exchanges[-1]].response)
            if part.exchanges
            else "nothing was sent"
        )
        return f"; its benign twin {literal(part.value)} failed too: {said}"
