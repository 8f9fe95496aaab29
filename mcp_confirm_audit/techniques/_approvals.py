"""Concurrent calls over the back channel: the person's accepts against the effects, and their reading."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.reading import Judged, Reading, Seen, reads
from ..models import Layer, Outcome, Part, Verdict


@dataclass(frozen=True, slots=True)
class Approvals(Part):
    """Concurrent calls on a legacy connection: how many questions the person accepted, how many effects.

    Each call that asks is its own question, answered by the person; an effect
    with no accepted question of its own was approved by nobody.
    """

    calls: int
    accepted: int
    taken: int


@reads(Approvals)
class ReadApprovals(Reading[Approvals]):
    """Every effect of concurrent calls must have a question of its own that the person accepted."""

    def counts_effects(self, part: Approvals) -> bool:
        return True

    def still(self, part: Approvals, seen: Seen) -> Judged:
        stopped = [e for e in seen.attack if e.response.outcome is Outcome.TRANSPORT]
        if stopped:
            return (
                Verdict.INCONCLUSIVE,
                Layer.TRANSPORT,
                f"the target stopped answering: {stopped[0].response.text}",
            )
        tally = f"{part.calls} calls, {part.accepted} questions accepted, {part.taken} effects"
        if part.taken > part.accepted:
            return (
                Verdict.VULNERABLE,
                Layer.NONE,
                f"{tally}: {part.taken - part.accepted} more than the person accepted (a call acted on an "
                "approval given to another, or on a decline)",
            )
        if part.taken == 0:
            return Verdict.INCONCLUSIVE, None, f"{tally}: nothing took effect, so no approval was spent"
        return Verdict.REFUSED, Layer.TOOL, f"{tally}: every effect had an accepted question of its own"

    def evidence(self, part: Approvals) -> tuple[str, ...]:
        return (
            f"calls: {part.calls}, questions the person accepted: {part.accepted}, effects: "
            f"{part.taken} (the victim put back each time)",
        )
