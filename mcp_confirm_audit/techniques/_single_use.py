"""Single use: redemptions of one approval of which at most one may act (the races, a wrong guess), and their reading."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.reading import Judged, Reading, Seen, layer_of, quoted, reads
from ..models import FAIL_CLOSED, Exchange, Layer, Outcome, Part, Verdict


@dataclass(frozen=True, slots=True)
class SingleUse(Part):
    """Redemptions of one approval of which at most one may take effect.

    The victim is put back, with the identity the user confirmed, every time
    it goes: a redemption that slipped past the single-use check then has
    something to act on, and `taken` counts every effect, not just the first.
    """

    # Indices into the transcript's exchanges: the redemptions sent together
    # (or the one honest redemption), and for each of them a sequential replay
    # on the same process afterwards, whose refusal is what that process's
    # single-use guard itself says.
    racing: tuple[int, ...]
    replays: tuple[int, ...]
    taken_racing: int  # effects during the racing redemptions
    taken: int  # effects in all, the replays included
    # What no effect at all means: "inconclusive" (the honest redemption should
    # have acted), "refused" (a decline may win the race), "fail-closed" (an
    # honest redemption on another replica was refused), or "burnt" (a wrong
    # guess, then the honest confirmation).
    if_none_taken: str = "inconclusive"
    # "restorer": the victim file was put back after every effect, so the disk
    # shows nothing of the race; "probes": an action that names no file, whose
    # one honest effect stays, so the count above is the judge, not the diff.
    counted_by: str = "restorer"


@reads(SingleUse)
class ReadSingleUse(Reading[SingleUse]):
    """Counted from effects, never from replies."""

    def counts_effects(self, part: SingleUse) -> bool:
        # The part's own count is the judge, however it counted: one honest payment (or one deletion
        # of a victim the restorer put back) is the approval working, two are the finding. A probe
        # that moved besides is not a second effect: putting the victim back shifts a listing of
        # the root (a new inode, a new place in the order), which the diff would take for one.
        return True

    def still(self, part: SingleUse, seen: Seen) -> Judged:
        return _judge(part, seen.transcript.exchanges)

    def evidence(self, part: SingleUse) -> tuple[str, ...]:
        # A case file is put back after every effect; a use of an action that names no file is not
        # (a payment stays made): its effects are counted from the probes.
        how = (
            "the victim put back each time" if part.counted_by == "restorer" else "each effect stays, counted"
        )
        return (f"effects: {part.taken_racing} during the race, {part.taken} in all ({how})",)


def _judge(record: SingleUse, exchanges: tuple[Exchange, ...]) -> Judged:
    racing = [exchanges[i] for i in record.racing]
    replays = [exchanges[i] for i in record.replays]
    stopped = [e for e in [*racing, *replays] if e.response.outcome is Outcome.TRANSPORT]
    if stopped:
        said = stopped[0].response.text
        return Verdict.INCONCLUSIVE, Layer.TRANSPORT, f"the target stopped answering: {said}"
    if record.if_none_taken == "burnt":
        return _judge_guess(record, racing[0], replays[0])
    if record.taken >= 2:
        return Verdict.VULNERABLE, Layer.NONE, f"one approval took effect {record.taken} times"
    # In the order they were sent: the process the approval was minted on first.
    sequential = [exchanges[i] for i in sorted(set(record.replays))]
    where = _layers_by_connection(sequential)
    if record.taken_racing == 0 and record.if_none_taken == "fail-closed":
        refusal = racing[0]
        layer = layer_of(refusal.response)
        said = refusal.response.text or refusal.response.outcome.value
        return (
            Verdict.REFUSED,
            layer,
            (
                f"fail-closed: an honest approval redeemed on {refusal.connection} was refused by {layer.value} "
                f"({said}); safe, but {FAIL_CLOSED}"
            ),
        )
    if record.taken == 0 and record.if_none_taken == "inconclusive":
        said = f"none of the {len(racing)} redemptions took effect, so single use was never exercised"
        return Verdict.INCONCLUSIVE, None, said
    once = "took effect once" if record.taken == 1 else "was honoured once"
    said = f"the approval {once}; no other redemption took effect ({where})"
    return Verdict.REFUSED, layer_of(sequential[0].response), said


def _judge_guess(record: SingleUse, guess: Exchange, honest: Exchange) -> Judged:
    """A wrong guess, then the honest confirmation: the guess must not act, nor spend what the honest one needs."""
    guessed = quoted(guess.response)
    if record.taken_racing:
        return Verdict.VULNERABLE, Layer.NONE, f"a wrong guess at the token or id took effect: {guessed}"
    if record.taken == 0:
        said = quoted(honest.response)
        return (
            Verdict.WEAK,
            layer_of(honest.response),
            f"one wrong guess ({guessed}) spent the approval: the honest confirmation then did nothing "
            f"({said}), so any caller can cancel a person's approval (denial of service)",
        )
    return (
        Verdict.REFUSED,
        layer_of(guess.response),
        f"the wrong guess took no effect ({guessed}) and the honest confirmation after it still did",
    )


def _layers_by_connection(replays: list[Exchange]) -> str:
    seen = {e.connection: layer_of(e.response).value for e in replays}
    return ", ".join(f"{layer} on {conn}" for conn, layer in seen.items())
