"""`stage-time-fields`: a staged item's fields stated falsely at the stage, then committed with nobody asked.

A two-step flow stages an item (an invoice), a person approves it when it
needs approving, and the agent commits it. Whether a person must approve is a
policy of the item's fields (an amount above a limit). Where the stage call
states those fields (the profile's honest stage: the flow's own staging call,
or a setup call that stages what the action then asks about), the attack
states every number the policy could read as the smallest the schema takes,
the item's other fields (the document's id) unchanged, and goes straight to
the commit: the person is never asked. Its other variant (`states:
another-record`) keeps the item's id and states the profile's `stage_as:` in
place of its other fields: another, smaller record's (another vendor's
purchase order and its total), which a server's own cross-checks of the
stated fields with each other still match.

First its twin: the item staged as the honest flow states it and committed at
once must not act (it needs a person); where it acts, no statement is needed
to skip the person (self-approval's finding) and the family is not applicable.
The real item (a value of the honest stage that names it, unchanged) acted on
is then `vulnerable`: it needs a person, and it took effect with nobody asked. The stage refusing the statement (before anything is
asked), or the commit refusing the item staged so (it still waits for a
person), is the gate holding (`tool`). A stage that states no number has
nothing the policy could misread: not applicable.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from ..confirmations import AgentFlow
from ..engine.reading import Judged, Reading, Seen, layer_of, literal, quoted, reads
from ..models import Layer, Outcome, Part, Verdict
from ..oracle.effects import drift_touched, holding
from . import ANY, technique
from ._elsewhere import person_flow
from ._flows import AttackChannel
from ._params import Params
from .base import Attack

_PROBE = "\x00staged-id\x00"
_WHAT = "stage call whose stated fields decide whether a person is asked"


class StageParams(Params):
    states: Literal["least", "another-record"] = Field(
        default="least",
        description=(
            "what the stage states: every number as the least its schema takes, or the profile's stage_as: "
            "(another, smaller record's fields) under the item's own id"
        ),
    )


@technique("stage-time-fields", mechanisms=ANY, input_value=True, params=StageParams)
async def stage_time_fields(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = person_flow(attack, _WHAT)
    if flow is None:
        return
    if not flow.stages:
        attack.not_applicable(f"nothing is staged before a person approves it: {flow.describe()}")
        return
    channel, victim = AttackChannel(attack), attack.victim
    args = attack.arguments(victim)
    if params.get("states") == "another-record":
        where = _as_another(attack, args)
    else:
        where = _least_stated(attack, args)
    if where is None:
        return
    index, restated = where
    if flow.redemption(args, _PROBE, {}) is None:
        attack.not_applicable(f"no call of the agent's commits a staged item: {flow.describe()}")
        return
    saved = victim.saved
    if not await _needs_a_person(attack, flow, channel, args, saved):
        return
    # The restated stage is the attack's first request; the snapshot follows it (staging is no effect).
    attack.attack_under_way()
    honest = args if index is None else attack.plan.setup[index].args
    tool = attack.plan.name if index is None else attack.plan.setup[index].tool
    part = StageDecl(tool, {k: (honest[k], v) for k, v in restated.items()}, _marks(honest, restated))
    attack.record(part)
    attack.note(
        f"{part.tool} states "
        + ", ".join(f"{k} as {v!r}, not {honest[k]!r}" for k, v in restated.items())
        + "; nobody is asked"
    )
    if index is not None:
        instance = await attack.staged_as(index, restated)
        if instance is None:
            attack.record(StageRefused(attack.staging_failed[:400]))
            await attack.start_attack()
            return
        args, saved = attack.arguments(instance), instance.saved
    else:
        args = {**args, **restated}
    shown = await flow.preview(channel, args)
    await attack.start_attack()
    if shown.handle is None:
        if shown.response.outcome is not Outcome.COMPLETE:
            attack.record(StageRefused(shown.response.text[:400] or shown.response.outcome.value))
            return
        attack.setup_failed(f"the stage handed out no id to commit ({shown.response.text[:200]})")
        return
    call = flow.redemption(args, shown.handle, {k: str(v) for k, v in saved.items()})
    assert call is not None
    await channel.call("the item staged so, committed with no person asked", *call)


def _least_stated(attack: Attack, args: Mapping[str, Any]) -> tuple[int | None, dict[str, Any]] | None:
    """Where the item is staged, and its numbers as the least their schema takes (a setup call: its first)."""
    schemas = {t.name: t.input_schema for t in attack.tools}
    stated = _understated(args, schemas.get(attack.plan.name) or {})
    if stated:
        return None, stated
    for i, s in enumerate(attack.plan.setup):
        if lowered := _understated(s.args, schemas.get(s.tool) or {}):
            return i, dict([next(iter(lowered.items()))])
    attack.not_applicable(
        f"no number stated where the item is staged ({attack.plan.name} or a setup call before it) is "
        "above the smallest its schema takes, so there is nothing to understate to the policy that "
        "decides whether a person is asked"
    )
    return None


def _as_another(attack: Attack, args: Mapping[str, Any]) -> tuple[int | None, dict[str, Any]] | None:
    """Where the item is staged (the call that states every field of stage_as:), and the fields that differ."""
    other = dict(attack.plan.stage_as)
    if not other:
        attack.not_applicable(
            "the profile names no other record to stage the item as: set stage_as: to the fields a truthful "
            "agent would state for a different, smaller record (e.g. {po_number: PO-1191, total: 640.0})"
        )
        return None
    calls = [(None, args), *((i, s.args) for i, s in enumerate(attack.plan.setup))]
    for index, honest in calls:
        if all(k in honest for k in other):
            restated = {k: v for k, v in other.items() if honest[k] != v}
            if not restated:
                attack.not_applicable(
                    f"stage_as: states what the honest stage already states ({', '.join(other)}): "
                    "nothing is restated"
                )
                return None
            return index, restated
    attack.not_applicable(
        f"no stage call ({attack.plan.name} or a setup call before it) states every field stage_as: names "
        f"({', '.join(sorted(other))}): set stage_as: to argument names of the call that stages the item"
    )
    return None


async def _needs_a_person(
    attack: Attack, flow: AgentFlow, channel: AttackChannel, args: Mapping[str, Any], saved: Mapping[str, Any]
) -> bool:
    """The twin: the item staged honestly and committed at once must not act (it needs a person).

    Where it acts, the gate never needed the person for this item (self-approval's finding, not this
    family's): the stated fields decide nothing, and the attack is not applicable.
    """
    shown = await flow.preview(channel, args)
    if shown.handle is None:
        said = shown.response.text[:200] or shown.response.outcome.value
        attack.setup_failed(f"the honest stage handed out no id to commit ({said})")
        return False
    call = flow.redemption(args, shown.handle, {k: str(v) for k, v in saved.items()})
    assert call is not None
    before = await attack.mark()
    reply = await channel.call("twin: the honestly staged item committed with no person asked", *call)
    moved = attack.changes(before, await attack.mark())
    if reply.outcome is Outcome.TRANSPORT and not moved:
        attack.setup_failed(
            f"the twin's commit got no answer ({reply.text[:120]}): whether it needs a person is unknown"
        )
        return False
    if moved:
        attack.not_applicable(
            "the item staged as the honest flow states it is committed with no person asked too "
            f"({', '.join(moved[:3])}): no person is needed whatever the stage states (self-approval's "
            "finding), so the stated fields decide nothing"
        )
        return False
    if reply.outcome is Outcome.COMPLETE:
        # Nothing moved, so it did not act; but an ordinary answer does not show it refused for want of a
        # person either (the twin's refusal is what this family stands on), so nothing is tried.
        attack.not_applicable(
            "the item staged as the honest flow states it, committed at once, answered normally and nothing "
            f"moved ({reply.text[:120]}): that it needs a person is not shown, so no statement can be shown "
            "to skip one"
        )
        return False
    attack.note(f"twin: the honestly staged item, committed at once, was refused: {reply.text[:160]}")
    return True


@dataclass(frozen=True, slots=True)
class StageDecl(Part):
    """The staging tool, each field stated falsely (the honest value, the stated one), and the values
    of the honest stage that name the item (unchanged): what shows the real item acted on."""

    tool: str
    stated: Mapping[str, tuple[Any, Any]]
    marks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StageRefused(Part):
    """The restated stage refused, before anything was asked: what it said."""

    said: str


@reads(StageRefused)
class ReadStageRefused(Reading[StageRefused]):
    def still(self, part: StageRefused, seen: Seen) -> Judged | None:
        stated = next((p for p in seen.transcript.parts if isinstance(p, StageDecl)), None)
        said = f" ({_said(stated)})" if stated is not None else ""
        return (
            Verdict.REFUSED,
            Layer.TOOL,
            f"the stage refused the item stated falsely{said} before any person was asked: "
            f"{literal(part.said[:200])}",
        )


@reads(StageDecl)
class ReadStageDecl(Reading[StageDecl]):
    """The real item acted on with nobody asked (the finding), or the commit refusing it."""

    def moved(self, part: StageDecl, seen: Seen) -> Judged | None:
        transcript = seen.transcript
        before, after = transcript.observed_before or {}, transcript.observed_after or {}
        marks = _naming(part, before, transcript.bookkeeping)
        touched, _ = drift_touched(before, after, marks, transcript.bookkeeping)
        if touched:
            return (
                Verdict.VULNERABLE,
                Layer.NONE,
                f"the item that needs a person (its honest stage, committed at once, was refused) was committed "
                f"with nobody asked: {_said(part)}, "
                f"and it was acted on ({'; '.join(touched[:4])})",
            )
        acted = ", ".join([*seen.effect.removed, *seen.effect.changed, *seen.effect.observed][:4])
        return (
            Verdict.INCONCLUSIVE,
            None,
            f"it acted ({acted}), but no effect probe shows the item ({', '.join(map(literal, part.marks))}): "
            "whether the real item was committed cannot be told (add an effect: that lists it)",
        )

    def still(self, part: StageDecl, seen: Seen) -> Judged | None:
        if any(isinstance(p, StageRefused) for p in seen.transcript.parts) or not seen.attack:
            return None
        last = seen.attack[-1]
        if last.response.outcome is Outcome.COMPLETE:
            return (
                Verdict.INCONCLUSIVE,
                None,
                f"the commit answered normally and nothing took effect ({_said(part)}): "
                f"nothing shows the gate held: {quoted(last.response)}",
            )
        if last.response.outcome is Outcome.TRANSPORT:
            return None  # no answer is no refusal: the common rule says the target stopped answering
        return (
            Verdict.REFUSED,
            layer_of(last.response),
            f"the commit refused the item staged so ({_said(part)}): {quoted(last.response)}",
        )

    def evidence(self, part: StageDecl) -> tuple[str, ...]:
        return (f"stage-time fields: {_said(part)}",)


def _said(part: StageDecl) -> str:
    fields = ", ".join(
        f"{k} stated as {literal(new)}, not {literal(old)}" for k, (old, new) in part.stated.items()
    )
    return f"{part.tool} with {fields}"


def _understated(args: Mapping[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    """Each number of `args` as the smallest positive value its schema takes, where that is below it."""
    props = schema.get("properties") or {}
    lowered: dict[str, Any] = {}
    for name, value in args.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        least = _least(value, props.get(name) or {})
        if least < value:
            lowered[name] = least
    return lowered


def _least(value: int | float, prop: Mapping[str, Any]) -> int | float:
    minimum = prop.get("minimum")
    exclusive = prop.get("exclusiveMinimum")
    if isinstance(value, int):
        floor = 1
        if isinstance(minimum, int | float):
            floor = max(floor, int(-(-minimum // 1)))
        if isinstance(exclusive, int | float):
            floor = max(floor, int(exclusive // 1) + 1)
        return floor
    floor_f = 0.01
    if isinstance(minimum, int | float):
        floor_f = max(floor_f, float(minimum))
    if isinstance(exclusive, int | float):
        floor_f = max(floor_f, float(exclusive) + 0.01)
    return floor_f


def _naming(part: StageDecl, before: Mapping[str, Any], bookkeeping: tuple[str, ...]) -> tuple[str, ...]:
    """The marks that name the item itself: none held, before the attack, by another record's entry.

    A value the item shares with the record it was stated as (a currency, a status) names neither:
    that record's entry changing holds it too (invoice-intake-mcp's "EUR", on the other vendor's
    order as on the invoice). Another record's entry holds a stated value and only some of the
    marks; the item staged as that record (staged before the snapshot) holds them all.
    """
    stated = [value for _, value in part.stated.values()]
    shared: set[str] = set()
    for observed in before.values():
        theirs = {entry for _, entry in holding(observed, stated, bookkeeping)}
        held: dict[str, set[str]] = {}
        for mark, entry in holding(observed, part.marks, bookkeeping):
            held.setdefault(entry, set()).add(mark)
        shared |= {
            m for entry, marks in held.items() if entry in theirs and marks != set(part.marks) for m in marks
        }
    return tuple(mark for mark in part.marks if mark not in shared)


def _marks(honest: Mapping[str, Any], changed: Mapping[str, Any]) -> tuple[str, ...]:
    """The honest stage's string values left as they were, that name the item (a document's id)."""
    return tuple(
        v
        for k, v in honest.items()
        if k not in changed and isinstance(v, str) and len(v) >= 3 and "{" not in v
    )
