"""An argument that takes a closed set of values: its benign twin, and why no hostile text reaches the question through it.

prompt-forging puts hostile text into each string argument the question shows. Before it
does, each such argument gets a benign twin: the same call with a harmless word in its place
(`plain-memo-value`). A twin the target asks about shows the argument carries text to the
person; a twin refused before any question shows it does not, and the argument is left out.
Where the twin's refusal names the values the argument takes ("vent must be one of north,
south, roof", "tanks: rain, well") and one of them, sent as a third call, is asked about, the
argument takes a closed set: nothing the harness could send through it reaches a question.

Where the refusal names no values, a second twin is sent: the honest value (the one already
asked about) with its last digit, else its last letter, changed (`J1` -> `J7`, `inv-0042` ->
`inv-0048`): the same length and the same characters in each place. A format check takes a
value of its shape; only a lookup of the records the target knows refuses it. So a shape twin
refused before any question, while the honest value was asked about, shows the argument names
a record that must exist: nothing the harness could send through it reaches a question (a
record whose own text is hostile is another attack). A shape twin that is asked about shows
the argument open to values of its shape: the hostile values go in after it (`J7` + text).

When no argument the question shows is left, the attack is `not_applicable`, quoting the
refusal: nothing was defended (not `refused`) and nothing is left to learn (not
`inconclusive`). An argument whose twin was refused in words that name no values, and whose
shape twin could not be made or was not refused either, or whose named value was not asked
about, says only that the harness's call failed: then, with no argument left, the attack stays
`inconclusive`, quoting the twin's refusal.

A value a setup call stages (the desk's `plan_booking(slot_id, phone, date)` before `book(plan_id)`)
gets the same twins, each staged through that call. Where its twin or shape twin was staged and
reached the gate, and the setup call refused every hostile value with nothing moved, the attack is
`refused` by the layer that refused them, quoting it (`refused_after_twin`); an action's own argument
refused so stays inconclusive, as the common reading leaves it.

The verdict is read from the transcript: the twin's refusal is read again (`constraints.read`),
the third call's reply must be a question or a preview, and the shape twin is derived again
from the honest value, found in the requests of both calls, refused and asked about in turn.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..confirmations import replies
from ..engine.reading import Judged, Reading, Seen, layer_of, literal, quoted, reads
from ..models import Exchange, Outcome, Part, Response, Said, Verdict
from ..target import constraints
from ._arguments import strings
from ._asked import Asked
from .base import Attack


@dataclass(frozen=True, slots=True)
class TwinOfArgument:
    """One argument's benign twin: its value and exchange, and the value its refusal named, tried third."""

    argument: str
    twin: str
    twin_exchange: int
    # How the twin reached the gate ("was asked about", "was previewed ..."), "" if refused before it.
    reached: str = ""
    # A value the twin's refusal names, sent as a third call ("" when the refusal named none).
    valid: str = ""
    valid_exchange: int | None = None
    valid_reached: str = ""
    # The honest value (asked about at `honest_exchange`) and its shape twin, sent when the refusal named no values.
    honest: str = ""
    honest_exchange: int | None = None
    shape: str = ""
    shape_exchange: int | None = None
    # How the shape twin reached the gate, "" if refused before it (or never sent).
    shape_reached: str = ""


@dataclass(frozen=True, slots=True)
class ClosedSet(Part):
    """The benign twins of the arguments the question shows, and how many carry text to the person."""

    twins: tuple[TwinOfArgument, ...]

    @property
    def open(self) -> tuple[TwinOfArgument, ...]:
        return tuple(t for t in self.twins if t.reached or t.shape_reached)


def named_values(argument: str, twin: str, refusal: Response) -> list[str]:
    """The values a refusal of `twin` in `argument` names as the ones it takes ([] if it names none)."""
    text = replies.refusal_text(refusal) or refusal.text
    name = argument.rpartition(".")[2]
    for found in constraints.read(text, {name: twin}):
        choices = found.facets.get("enum")
        if found.arg == name and isinstance(choices, list) and choices:
            return [str(choice) for choice in choices if str(choice) != twin]
    return []


def took(response: Response) -> bool:
    """Whether a reply took the value: it asked, answered, or handed out a challenge (`ok: false`, no error)."""
    said = replies.said(response)
    if said is not Said.REFUSED:
        return said is not Said.STOPPED
    data = replies.payload(response) if response.outcome is Outcome.COMPLETE else None
    return (
        data is not None
        and replies.refusal(response) == "ok: false"
        and not any(data.get(k) for k in ("error", "errors", "reason", "detail"))
    )


def closed_by(twin: TwinOfArgument, exchanges: Sequence[Exchange]) -> str | None:
    """Why the argument takes only a closed set of values, read from the recorded exchanges; None if not shown."""
    if twin.reached or twin.shape_reached or twin.twin_exchange < 0:
        return None
    refused = exchanges[twin.twin_exchange].response
    if took(refused):
        return None
    if twin.shape_exchange is not None:
        return looked_up(twin, exchanges)
    if twin.valid_exchange is None or not twin.valid_reached:
        return None
    if twin.valid not in named_values(twin.argument, twin.twin, refused):
        return None
    if not took(exchanges[twin.valid_exchange].response):
        return None
    said = literal((replies.refusal_text(refused) or refused.text)[:200])
    return (
        f"{twin.argument} takes one of a closed set: its benign twin {literal(twin.twin)} was refused "
        f"before any question ({said}), and {literal(twin.valid)}, a value that refusal names, "
        f"{twin.valid_reached}"
    )


def shape_twin(honest: str) -> str:
    """`honest` with its last digit (else its last letter) changed, in the same class; "" if it has neither.

    The same length and the same kind of character in each place (`J1` -> `J7`, `inv-0042` ->
    `inv-0048`, `alice` -> `alicb`): a digit stays a digit, and one that is not 0 stays not 0;
    a letter keeps its case, and one of a..f stays one (a hex id stays hex).
    """
    digits = [i for i, ch in enumerate(honest) if ch in string.digits]
    letters = [i for i, ch in enumerate(honest) if ch in string.ascii_letters]
    if digits:
        at = digits[-1]
        d = int(honest[at])
        new = str((d + 5) % 9 + 1) if d else "6"
    elif letters:
        at = letters[-1]
        low = honest[at].lower()
        pool = "abcdef" if low in "abcdef" else "ghijklmnopqrstuvwxyz"
        new = pool[(pool.index(low) + len(pool) // 2) % len(pool)]
        new = new.upper() if honest[at].isupper() else new
    else:
        return ""
    return honest[:at] + new + honest[at + 1 :]


def holds(request: Mapping[str, Any], argument: str, value: str) -> bool:
    """Whether a recorded call sent `value` as (dotted) `argument`."""
    arguments = request.get("arguments")
    return isinstance(arguments, Mapping) and (argument, value) in strings(arguments)


def looked_up(twin: TwinOfArgument, exchanges: Sequence[Exchange]) -> str | None:
    """Why the argument names a record that must exist (its shape twin refused, the honest value asked); None if not shown."""
    if twin.honest_exchange is None or twin.shape_exchange is None or twin.shape_reached:
        return None
    if not twin.shape or twin.shape != shape_twin(twin.honest):
        return None
    shaped, honest = exchanges[twin.shape_exchange], exchanges[twin.honest_exchange]
    if replies.said(shaped.response) is not Said.REFUSED or not holds(
        shaped.request, twin.argument, twin.shape
    ):
        return None
    if not took(honest.response) or not holds(honest.request, twin.argument, twin.honest):
        return None
    said = literal((replies.refusal_text(shaped.response) or shaped.response.text)[:200])
    return (
        f"{twin.argument} names a record that must exist: its benign twin {literal(twin.twin)} was refused "
        f"before any question, and so was {literal(twin.shape)} ({said}), a value of the same shape as the "
        f"honest {literal(twin.honest)}, which was asked about; a format check takes a value of its shape, "
        f"only a lookup refuses one, so {twin.argument} takes only values the target already knows (a record "
        "whose own text is hostile would be another attack, not tried here)"
    )


def reached_by(twin: TwinOfArgument, exchanges: Sequence[Exchange]) -> tuple[str, str] | None:
    """The value a setup call staged, by which an open argument reached the gate, and how it is named.

    The reply at the twin's (or shape twin's) exchange took the value, and a setup call before it,
    each call between them taking what it was sent, staged it. None if the transcript does not show
    that, or the asked call sent the value itself (an action's own argument: see `refused_after_twin`).
    """
    if twin.shape_reached and twin.shape_exchange is not None and twin.shape == shape_twin(twin.honest):
        value, at = twin.shape, twin.shape_exchange
        named = (
            f"its benign twin {literal(twin.twin)} was refused, but {literal(twin.shape)}, a value of the "
            f"shape of the honest {literal(twin.honest)}, {twin.shape_reached}"
        )
    elif twin.reached and twin.twin_exchange >= 0:
        value, at = twin.twin, twin.twin_exchange
        named = f"its benign twin {literal(twin.twin)} {twin.reached}"
    else:
        return None
    if not 0 <= at < len(exchanges) or not took(exchanges[at].response):
        return None
    # Back from the call that was asked about, over the setup calls that staged its subject (each took).
    if holds(exchanges[at].request, twin.argument, value):
        return None
    for exchange in reversed(exchanges[:at]):
        if not took(exchange.response):
            return None
        if holds(exchange.request, twin.argument, value):
            return value, named
    return None


def refused_after_twin(part: ClosedSet, seen: Seen) -> Judged | None:
    """`refused` by the layer that refused every hostile value a setup call was to stage, with no effect,
    in an argument whose twin, staged through the same setup call, reached the gate.

    The argument was open (its twin, or its shape twin, was staged and then asked about or previewed), so
    the harness's staging call was right: what refused the same call with hostile text in place of that
    value keeps the text out of anything the gated action is handed, so out of what the person reads.
    None (the common reading: nothing read, nothing judged) when any hostile value reached a question,
    anything moved, or some call of the attack was not refused; and when the value is the action's own
    argument, which the common reading keeps inconclusive (test_forging_inside_values.py asserts it).
    """
    asked = next((p for p in seen.transcript.parts if isinstance(p, Asked)), None)
    if asked is None or asked.reached or not seen.attack or seen.effect.happened:
        return None
    if any(replies.said(e.response) is not Said.REFUSED for e in seen.attack):
        return None
    exchanges = seen.transcript.exchanges
    for twin in part.open:
        found = reached_by(twin, exchanges)
        if found is None:
            continue
        value, named = found
        hostile = [
            e
            for e in seen.attack
            if any(
                arg == twin.argument
                and sent != value
                and sent.startswith(twin.shape if twin.shape_reached else "")
                for arg, sent in strings(e.request.get("arguments") or {})
            )
        ]
        if hostile:
            refusal = hostile[-1].response
            return (
                Verdict.REFUSED,
                layer_of(refusal),
                f"every hostile value in {twin.argument!r} was refused before any question with no effect "
                f"({asked.withheld} sent), while {named}: {quoted(refusal)}",
            )
    return None


@reads(ClosedSet)
class ReadClosedSet(Reading[ClosedSet]):
    def unjudged(self, part: ClosedSet, seen: Seen) -> Judged | None:
        if part.open:
            return refused_after_twin(part, seen)
        if not part.twins:
            return None
        closed = [closed_by(twin, seen.transcript.exchanges) for twin in part.twins]
        if all(closed):
            reason = "; ".join(c for c in closed if c)
            return (
                Verdict.NOT_APPLICABLE,
                None,
                f"no argument the question shows takes text: {reason}; so no hostile text can be put "
                "in front of the person through it",
            )
        # A twin refused in words that name no closed set: the harness's call may be what failed.
        twin = next(t for t, c in zip(part.twins, closed, strict=True) if c is None)
        exchanges = seen.transcript.exchanges
        said = (
            quoted(exchanges[twin.twin_exchange].response) if twin.twin_exchange >= 0 else "nothing was sent"
        )
        return (
            Verdict.INCONCLUSIVE,
            None,
            f"no argument the question shows took a harmless value: the benign twin {literal(twin.twin)} "
            f"of {twin.argument!r} was refused before any question ({said}), so hostile text was never "
            "sent through it",
        )

    def evidence(self, part: ClosedSet) -> tuple[str, ...]:
        lines = []
        for twin in part.twins:
            line = f"benign twin of {twin.argument!r} {literal(twin.twin)}: {twin.reached or 'refused before any question'}"
            if twin.valid:
                line += f"; {literal(twin.valid)}, a value its refusal names, {twin.valid_reached or 'was refused too'}"
            if twin.shape:
                line += (
                    f"; {literal(twin.shape)}, a value of the shape of the honest {literal(twin.honest)}, "
                    f"{twin.shape_reached or 'was refused before any question too'}"
                )
            lines.append(line)
        return tuple(lines)


class ArgumentProbe(Protocol):
    """What the twin needs of prompt-forging's probe of one argument."""

    def placements(self, name: str) -> list[tuple[int, str]]: ...

    def reached(self, placement: int) -> None: ...

    async def ask_once(self, name: str) -> tuple[str | None, str]: ...


def twin_text(argument: str, plain: str) -> str:
    """A harmless word for `argument`, in the characters its plain value uses (letters alone, or with hyphens)."""
    word = re.sub(r"[^a-z]", "", argument.rpartition(".")[2].lower()) or "value"
    text = f"plain{word}" if plain.isalpha() else f"plain-{word}-value"
    return text.upper() if plain.isupper() else text


async def twin_of(
    attack: Attack, argument: str, plain: str, probe: ArgumentProbe, *, previewed: bool = False
) -> TwinOfArgument:
    """Send `argument`'s benign twin (each placement until one is asked about); if refused, a value it names.

    A placement the twin reached is kept for the hostile values (`probe.reached`). What was
    asked is never answered: the twin is setup, never judged.
    """
    text = twin_text(argument, plain)
    words = "was previewed" if previewed else "was asked about"
    refusal: tuple[str, int] | None = None
    for placement, value in probe.placements(text):
        before = len(attack.exchanged)
        shown, _ = await probe.ask_once(value)
        index = _decisive(attack.exchanged, before)
        if index is None:
            continue
        if shown is not None:
            probe.reached(placement)
            return TwinOfArgument(argument, value, index, words)
        refusal = refusal or (value, index)
    if refusal is None:
        return TwinOfArgument(argument, text, -1)
    value, index = refusal
    named = named_values(argument, value, attack.exchanged[index].response)
    if not named:
        return await _shape_twin(attack, TwinOfArgument(argument, value, index), plain, probe, words)
    valid = next((v for v in named if v != plain), named[0])
    before = len(attack.exchanged)
    shown, _ = await probe.ask_once(valid)
    valid_index = _decisive(attack.exchanged, before)
    reached = words if shown is not None else ""
    return TwinOfArgument(argument, value, index, "", valid, valid_index, reached)


def in_sandbox(attack: Attack, plain: str) -> bool:
    """Whether `plain` names an entry of the audit's own sandbox (a folder, a file).

    Such a record is one anybody who can write there makes, the harness too: a folder whose
    name is hostile text is within reach, so a refusal of a name that does not exist says
    nothing about what the question shows, and the lookup rule does not apply.
    """
    root = attack.sandbox.root
    candidates = (plain,) if os.path.isabs(plain) else (os.path.join(root, plain),)
    return any(
        os.path.commonpath([os.path.abspath(root), os.path.abspath(c)]) == os.path.abspath(root)
        and os.path.lexists(c)
        for c in candidates
    )


async def _shape_twin(
    attack: Attack, twin: TwinOfArgument, plain: str, probe: ArgumentProbe, words: str
) -> TwinOfArgument:
    """`twin`, refused in words that name no values, with the honest value's shape twin sent outright."""
    shape = shape_twin(plain)
    outright = [placement for placement, value in probe.placements(shape) if value == shape]
    if not shape or not outright or in_sandbox(attack, plain):
        return twin
    exchanged = attack.exchanged
    honest = next(
        (
            i
            for i in range(twin.twin_exchange - 1, -1, -1)
            if took(exchanged[i].response) and holds(exchanged[i].request, twin.argument, plain)
        ),
        None,
    )
    before = len(exchanged)
    shown, _ = await probe.ask_once(shape)
    if shown is not None:
        probe.reached(outright[0])
    return replace(
        twin,
        honest=plain,
        honest_exchange=honest,
        shape=shape,
        shape_exchange=_decisive(attack.exchanged, before),
        shape_reached=words if shown is not None else "",
    )


def _decisive(exchanged: Sequence[Exchange], before: int) -> int | None:
    """The index of the reply that decided a probe's call: its last refusal, else its last exchange."""
    sent = range(before, len(exchanged))
    refused = [i for i in sent if replies.said(exchanged[i].response) is Said.REFUSED]
    return refused[-1] if refused else (sent[-1] if sent else None)
