"""Single use: redemptions of one approval of which at most one may act (the races, a wrong guess), and their reading."""

from __future__ import annotations

from dataclasses import dataclass

from ..confirmations import replies
from ..engine.reading import Judged, Reading, Seen, layer_of, quoted, reads
from ..models import FAIL_CLOSED, Exchange, Layer, Outcome, Part, Said, Verdict


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
        return _judge(part, seen.transcript.exchanges, seen.transcript.effect_places)

    def evidence(self, part: SingleUse) -> tuple[str, ...]:
        # A case file is put back after every effect; a use of an action that names no file is not
        # (a payment stays made): its effects are counted from the probes.
        how = (
            "the victim put back each time" if part.counted_by == "restorer" else "each effect stays, counted"
        )
        return (f"effects: {part.taken_racing} during the race, {part.taken} in all ({how})",)


def _judge(record: SingleUse, exchanges: tuple[Exchange, ...], places: tuple[str, ...] = ()) -> Judged:
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
    done = _done_reply(record, racing, sequential)
    if record.taken == 1 and done is not None:
        # What the redemption that took effect was answered is a success: a reply worded so refused
        # nothing, whichever redemption got it. Only the count can tell whether it acted again.
        alike = [e for e in (*racing, *sequential) if _reply(e) == done]
        shown = quoted(alike[0].response)
        if any(_reply(e) == done for e in sequential) and not _repeats_show(record, places):
            return (
                Verdict.INCONCLUSIVE,
                None,
                f"the approval took effect once, but {len(alike)} of the {len(racing) + len(sequential)} "
                f"redemptions, the sequential replay among them, were answered alike, as the one that took "
                f"effect was ({shown}): a repeat of this action leaves nothing new where its effect shows "
                f"({_where(places)}), so whether they acted again is not seen",
            )
        refusing = [e for e in (*sequential, *racing) if _reply(e) != done]
        if not refusing:
            # Each would have shown (a new row, the victim gone again) and none did; a success reply is
            # no layer's refusal.
            said = f"the approval {once}; no other redemption took effect, though each was answered as done ({shown})"
            return Verdict.REFUSED, None, said
        return (
            Verdict.REFUSED,
            layer_of(refusing[0].response),
            f"the approval {once}; no other redemption took effect ({where})",
        )
    said = f"the approval {once}; no other redemption took effect ({where})"
    return Verdict.REFUSED, layer_of(sequential[0].response), said


def _reply(exchange: Exchange) -> tuple[Said, int | None, str]:
    """A redemption's reply as the controls learn one: its class, its code and its shape."""
    response = exchange.response
    return replies.said(response), response.code, replies.shape(response)


def _done_reply(
    record: SingleUse, racing: list[Exchange], sequential: list[Exchange]
) -> tuple[Said, int | None, str] | None:
    """How the redemption that took effect was answered, where the record shows which one it was.

    The only redemption whose reply no other racing one shares, when one of the race took effect;
    every one, when all were answered alike; the sequential replay, when it alone took effect. Only an
    ordinary result: a redemption that acted and was answered with an error says nothing of success.
    """
    if record.taken_racing == 0 and record.taken == 1 and len(sequential) == 1:
        found: tuple[Said, int | None, str] | None = _reply(sequential[0])
    else:
        answered = [_reply(e) for e in racing]
        alone = [r for r in set(answered) if answered.count(r) == 1]
        if len(set(answered)) == 1:
            found = answered[0]
        elif record.taken_racing == 1 and len(alone) == 1:
            found = alone[0]
        else:
            found = None
    return found if found is not None and found[0] is Said.ACTED else None


def _repeats_show(record: SingleUse, places: tuple[str, ...]) -> bool:
    """Whether a second effect of this action would be counted: the victim is put back after each one,
    or each effect adds an item of its own (a row, a request at the sink). A value set again, a file
    made again or touched, a row already gone: a repeat leaves nothing new to count."""
    if record.counted_by == "restorer":
        return True
    return any(p.startswith("added ") and p.endswith("[*]") for p in places)


def _where(places: tuple[str, ...]) -> str:
    return ", ".join(places[:3]) if places else "no place the controls could read it by"


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
