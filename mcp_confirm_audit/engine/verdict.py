"""The verdict: a pure function of a catalogue entry and a recorded transcript.

Order of judgement, most damning first: an effect on disk during the attack
is `vulnerable` whatever the target said; then findings about what the human
was shown; then the layer whose answer ended the attack. A refusal that cannot
be told apart from a crash is inconclusive, never a pass.

What one family records of its own is a part of the transcript, read through
the reading its family registered with it (engine/reading.py): `judge` keeps
the common rules and asks each part at the points named there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..catalogue.prompt_checks import escaped
from ..confirmations import replies
from ..confirmations.detect import asking_payload
from ..confirmations.elicitation import LEGACY
from ..models import (
    AttackSpec,
    Effect,
    Exchange,
    Layer,
    Outcome,
    Phase,
    Result,
    Said,
    Signatures,
    Transcript,
    Verdict,
)
from ..oracle.effects import (
    REWRITTEN,
    another_part,
    at_the_gate,
    disk_places,
    is_ignored,
    probe_changes,
    probe_of,
    probe_places,
    reworded,
    unasked_while_asking,
    where_it_shows,
    where_of,
)
from ..target.arguments import FILLER
from ..techniques import load
from .reading import QUOTED, Seen, layer_of, literal, reading_of

# Readings and helpers a report or a test reaches through the verdict.
__all__ = ["QUOTED", "describe", "effect_of", "judge", "layer_of", "literal", "refs_in_era"]
from ..oracle.sandbox import diff


def judge(spec: AttackSpec, transcript: Transcript) -> Result:
    load()  # every family registered, and with it the reading of each part it records
    attack = [e for e in transcript.exchanges if e.phase is Phase.ATTACK]
    asked = any(e.response.outcome is Outcome.INPUT_REQUIRED for e in attack)
    effect = effect_of(transcript)
    evidence = _evidence(transcript, effect)
    seen = Seen(spec, transcript, tuple(attack), effect)
    parts = [(part, reading_of(part)) for part in transcript.parts]

    def result(verdict: Verdict, layer: Layer | None, reason: str) -> Result:
        unasked = _unasked_where_it_shows(transcript)
        if verdict is Verdict.REFUSED and unasked and not effect.happened:
            # Nothing was seen to move, but where the effect may show was never looked at.
            verdict, layer = Verdict.INCONCLUSIVE, None
            reason = (
                f"nothing moved where it was looked at, but {', '.join(unasked)} was not: the target "
                f"serves one request at a time and its question was open ({reason})"
            )
        if transcript.upstream and effect.happened and verdict in (Verdict.VULNERABLE, Verdict.WEAK):
            # A proxy's finding: the process that acted is the upstream behind it, which the profile names.
            reason = (
                f"{reason} (the process that acted is the upstream {literal(transcript.upstream)}, "
                "as the profile names it: the proxy let the call through to it)"
            )
        return Result(
            id=spec.id,
            family=spec.family,
            title=spec.title,
            tool=transcript.tool,
            variant=spec.variant,
            severity=spec.severity,
            level=spec.level,
            verdict=verdict,
            layer=layer,
            asked_user=asked,
            effect=effect,
            reason=reason,
            evidence=evidence,
            refs=refs_in_era(spec, transcript.era),
            mechanism=transcript.mechanism,
            era=transcript.era,
        )

    if not transcript.precondition.ok:
        subjects = _the_subjects_own(effect, transcript.case_dir if transcript.only_the_case_counts else None)
        if transcript.exchanges and subjects and not transcript.setup_failure:
            # A family that runs without an honest flow: the effect is the attack's own doing.
            lost = ", ".join(subjects[:4])
            why = (
                transcript.effect_verdict[1]
                if transcript.effect_verdict is not None
                else "the attack took effect"
            )
            reason = (
                f"{why}, where the honest flow never completed ({transcript.precondition.reason}): {lost}"
            )
            return result(Verdict.VULNERABLE, Layer.NONE, reason)
        if transcript.exchanges and effect.happened and not transcript.setup_failure:
            # No honest flow taught what the action moves or what the target writes on every call
            # (a proxy's log of calls): a change that is not the action's own subject is not judged.
            moved = ", ".join([*effect.removed, *effect.changed, *effect.observed][:4])
            reason = (
                f"honest flow failed: {transcript.precondition.reason}; what changed ({moved}) is none of "
                "the action's own subject (the files of its case), and with no honest flow to learn this "
                "target's bookkeeping from, it is not judged"
            )
            return result(Verdict.INCONCLUSIVE, None, reason)
        if transcript.exchanges and transcript.setup_failure:
            reason = f"honest flow failed: {transcript.precondition.reason}; {transcript.setup_failure}"
            return result(Verdict.INCONCLUSIVE, None, reason)
        return result(Verdict.INCONCLUSIVE, None, f"honest flow failed: {transcript.precondition.reason}")
    if transcript.not_applicable:
        return result(Verdict.NOT_APPLICABLE, None, transcript.not_applicable)
    counted_apart = any(reading.counts_effects(part) for part, reading in parts)
    gate = _around_the_gate(transcript, effect)
    if gate is not None and gate[0] is not None:
        return result(gate[0], Layer.NONE, gate[1])
    if effect.happened and not counted_apart and gate is None:
        for part, reading in parts:
            if (judged := reading.moved(part, seen)) is not None:
                return result(*judged)
        touched = [*effect.removed, *effect.changed]
        lost = ", ".join([*touched, *effect.observed][:4])
        if transcript.effect_verdict is not None:
            verdict, why = transcript.effect_verdict
            return result(verdict, Layer.NONE, f"{why}: {lost}")
        where = "on disk" if touched else "where the action's effect shows"
        return result(Verdict.VULNERABLE, Layer.NONE, f"the attack took effect {where}: {lost}")
    if transcript.setup_failure:
        return result(Verdict.INCONCLUSIVE, None, f"could not set the attack up: {transcript.setup_failure}")
    if malformed := [e for e in attack if e.unfilled]:
        # Nothing moved, but a call went out malformed: whatever the target answered it was about the
        # literal `{NAME}`, not the gate.
        return result(Verdict.INCONCLUSIVE, None, _unfilled(malformed[0]))
    if attack and attack[-1].malformed and transcript.gate is None:
        # Nothing moved, but the harness's own call was wrong by the tool's schema: what came back
        # ("no staged invoice with this id", "invalid token") is about that call, not the gate.
        wrong = attack[-1]
        said = wrong.response.text or wrong.response.outcome.value
        reason = (
            f"the harness's call to {wrong.request.get('name')} was malformed ({wrong.malformed}), "
            f"so the target's answer {literal(said[:QUOTED])} is about that call, not the gate"
        )
        return result(Verdict.INCONCLUSIVE, None, reason)
    for part, reading in parts:
        if (judged := reading.still(part, seen)) is not None:
            return result(*judged)
    for severity in (Verdict.VULNERABLE, Verdict.WEAK):
        found = [message for level, message in transcript.findings if level is severity]
        if found:
            return result(severity, transcript.finding_layer or Layer.NONE, "; ".join(found))
    for part, reading in parts:
        if (judged := reading.unjudged(part, seen)) is not None:
            return result(*judged)
    if not attack:
        return result(Verdict.INCONCLUSIVE, None, "no attack request was sent")
    learned = transcript.signatures
    decisive_exchange = attack[-1]
    decisive = decisive_exchange.response
    # prompt-forging's staging calls are the gated action's own, and what it judged is what the
    # person read; ungated's staging calls are tried like any other, but quoted only when alone.
    read = any(reading.judges_what_was_read for _, reading in parts)
    if transcript.gate is not None and gate is not None and not (transcript.gate.staged and read):
        # Another tool judged at the gate: nothing moving says something only if one of its calls ran.
        # A setup tool making a use of the action (staging) is no try of the others: it counts only
        # when it is all there is to try.
        tried = [e for e in attack if _ran(e, learned)]
        others = [e for e in attack if e.request.get("name") not in transcript.gate.staging_tools]
        own = [e for e in tried if e.request.get("name") not in transcript.gate.staging_tools]
        if not tried or (others and not own):
            return result(Verdict.INCONCLUSIVE, None, _nothing_tried(others or attack, gate[1]))
        if stalled := [e for e in others if e.response.outcome is Outcome.TRANSPORT]:
            # A call that never ran (its connection lost, no answer in time) tried nothing: the tools
            # that did run refusing says nothing about it.
            return result(Verdict.INCONCLUSIVE, None, _never_ran(stalled, gate[1]))
        if unfed := [e for e in others if not _ran(e, learned) and FILLER in e.response.text]:
            # A tool that could only be sent a value the harness made up, and answered about it (mcp-changeset's
            # undo_change: "unknown change 'mcp-confirm-audit'"), was never tried: a reader that ran beside
            # it moving nothing says nothing about it.
            return result(Verdict.INCONCLUSIVE, None, _fed_the_filler(unfed, gate[1]))
        decisive_exchange = (own or tried)[-1]
        decisive = decisive_exchange.response
    layer = layer_of(decisive)
    said = decisive.text or (decisive.outcome.value)
    if decisive.outcome is Outcome.INPUT_REQUIRED or asking_payload(decisive) is not None:
        # Asking again (a question, or a fresh preview to confirm) is a refusal: the tool would not act
        # on what it was given.
        said = "asked the user again instead of acting"
    stopped = [e for e in attack[:-1] if e.response.outcome is Outcome.TRANSPORT]
    if layer is Layer.TRANSPORT:
        if any(_same_input(e, attack[-1]) and e.connection != attack[-1].connection for e in stopped):
            reason = f"the same input stopped two processes of the target (any client can stop it): {said}"
            return result(Verdict.WEAK, layer, reason)
        return result(Verdict.INCONCLUSIVE, layer, f"the target stopped answering: {said}")
    if stopped:
        once = stopped[0].response.text
        reason = f"the target stopped answering once ({once}), then answered again"
        return result(Verdict.INCONCLUSIVE, None, reason)
    # A run whose failure the result states (`exit status 1`) reported no success, whatever its outcome.
    if (
        spec.reported_success is not None
        and replies.said(decisive) is Said.ACTED
        and not replies.failed_exit(decisive)
    ):
        reason = f"reported success for something it could not do: {said}"
        return result(spec.reported_success, Layer.NONE, reason)
    if (nothing := replies.nothing_done(decisive)) is not None:
        # A success with nothing to do: the last control's world had no subject left for this call.
        reason = (
            f"no subject left: the world the last control left behind gave the call nothing to do "
            f"({nothing}), which is no refusal: {said}"
        )
        return result(Verdict.INCONCLUSIVE, None, reason)
    if (
        learned is not None
        and learned.unlearned
        and layer is Layer.TOOL
        and replies.said(decisive) is Said.ACTED
        and decisive.outcome is not Outcome.INPUT_REQUIRED
        and not spec.any_refusal
        and gate is None
    ):
        # No refusal control could run (nothing waited to be asked about), so this target never showed
        # how it refuses; an ordinary reply with nothing moved may be the world's, not the gate's
        # (magnemo-mcp's handoff once an earlier attack kept every waiting note), whatever it names.
        reason = (
            f"the target answered normally and nothing took effect, but {learned.unlearned}: nothing "
            f"shows its gate refused: {said}"
        )
        return result(Verdict.INCONCLUSIVE, None, reason)
    if (
        layer is Layer.TOOL
        and decisive.outcome is not Outcome.INPUT_REQUIRED
        and not spec.any_refusal
        and spec.reported_success is None
        # Learned or not, the SDK refusing malformed arguments is never the gate holding, nor is a
        # rate limit.
        and (
            (learned is not None and learned.learned())
            or replies.invalid_arguments(decisive)
            or replies.rate_limited(decisive) is not None
        )
        # Judged at the gate, another tool's reply says nothing: where its effect showed does.
        and gate is None
    ):
        # Nothing took effect; whether the gate is why is for the target's own words to say.
        who = replies.who_refused(decisive, learned or Signatures(), _sent_values(decisive_exchange))
        if who.by != "gate":
            # A throttled call was never judged: no twin makes its refusal the gate's.
            throttled = replies.rate_limited(decisive) is not None
            stands = [
                s
                for part, reading in parts
                if not throttled and (s := reading.stands(part, seen, decisive, who.why, said))
            ]
            if stands:
                said = stands[0]
            else:
                answered = (
                    "answered normally, nothing took effect"
                    if replies.said(decisive) is Said.ACTED
                    else "failed for another reason"
                )
                reason = f"the target {answered}, not shown to be its gate ({who.why}): {said}"
                reason += "".join(reading.unshown(part, seen) for part, reading in parts)
                return result(Verdict.INCONCLUSIVE, None, reason)
    if gate is not None:
        said = f"{gate[1]}: {said}"
    if layer not in spec.refused_by:
        allowed = ", ".join(x.value for x in spec.refused_by)
        return result(
            Verdict.WEAK, layer, f"refused by {layer.value}, where {allowed} should refuse it: {said}"
        )
    if spec.refuse_before_asking and asked:
        return result(Verdict.WEAK, layer, f"refused only after asking the user: {said}")
    for part, reading in parts:
        said = reading.held(part, seen, said)
    return result(Verdict.REFUSED, layer, said)


def refs_in_era(spec: AttackSpec, era: str | None) -> tuple[str, ...]:
    """The requirements a result cites: the legacy era's own where every connection it drove was legacy."""
    eras = {e.strip() for e in (era or "").split(",") if e.strip()}
    if spec.legacy_refs and eras and eras <= set(LEGACY):
        return spec.legacy_refs
    return spec.refs


def _ran(exchange: Exchange, learned: Signatures | None) -> bool:
    """Whether another tool's call ran: it acted or asked, or a gate of its own refused it.

    A call refused on its arguments, or for a reason no gate gives (the world, an unknown
    name), tried nothing: nothing moving after it says nothing about acting around the gate.
    Nor did one given an empty list that answered without asking ("Updated 0 links"): it
    was handed nothing to act on.
    """
    response = exchange.response
    said = replies.said(response)
    if said is Said.STOPPED:
        return False
    if said is Said.ACTED and _given_nothing(exchange):
        return False
    if said is not Said.REFUSED:
        return True
    return replies.refused_by_its_own_gate(response, learned or Signatures(), _sent_values(exchange))


def _sent_values(exchange: Exchange) -> list[Any]:
    """The values a call sent, and the tool's own name, for telling the target's own words from what it echoed.

    The SDK's "Error executing tool approve_memory: 'memory not found: ...'" names the tool the harness
    called: its "approve" is the harness's word, no gate's concern.
    """
    arguments = exchange.request.get("arguments")
    sent = list(arguments.values()) if isinstance(arguments, Mapping) else []
    name = exchange.request.get("name")
    return [*sent, name] if isinstance(name, str) else sent


def _unfilled(exchange: Exchange) -> str:
    """Why a call sent with a placeholder nothing filled judges nothing, naming it and what came back."""
    names = ", ".join("{" + name + "}" for name in exchange.unfilled)
    said = exchange.response.text or exchange.response.outcome.value
    return (
        f"the call to {exchange.request.get('name')} went out with {names} unfilled: no value was known "
        "for it when the attack sent it (a name only the person's step saves, and this attack leaves the "
        f"person out), so the target's answer {literal(said[:QUOTED])} is about the literal text, not "
        "the gate"
    )


def _given_nothing(exchange: Exchange) -> bool:
    """Whether a call was handed an empty list (of ids, of items): whatever it did, it did to nothing."""
    arguments = exchange.request.get("arguments")
    return isinstance(arguments, Mapping) and any(v == [] for v in arguments.values())


def _nothing_tried(attack: list[Exchange], nothing_moved: str) -> str:
    """Why no other tool's call counts, quoting what the target said to the first few."""
    quoted = "; ".join(
        f"{e.request.get('name')} said {literal((e.response.text or e.response.outcome.value)[:QUOTED])}"
        for e in attack[:3]
    )
    more = f" (and {len(attack) - 3} more)" if len(attack) > 3 else ""
    return (
        f"{nothing_moved}, but none of the {len(attack)} calls to other tools ran: each failed on its "
        f"arguments or for a reason that is not a gate's, so nothing was tried around the gate: {quoted}{more}"
    )


def _fed_the_filler(unfed: list[Exchange], nothing_moved: str) -> str:
    """Why an attack some of whose calls were refused about the harness's own made-up value is no refusal."""
    return (
        f"{nothing_moved}, but {len(unfed)} of the calls to other tools could only be sent a value the harness "
        f"made up ({FILLER!r}) and were refused about it, so they were not tried around the gate "
        f"(name their arguments in a profile's setup: to try them): {_quoted(unfed)}"
    )


def _never_ran(lost: list[Exchange], nothing_moved: str) -> str:
    """Why an attack some of whose calls never ran is no refusal, naming them and what the transport said."""
    return (
        f"{nothing_moved}, but {len(lost)} of the calls to other tools never ran (no answer came back), "
        f"so they were not tried around the gate and no refusal rests on them: {_quoted(lost)}"
    )


def _quoted(calls: list[Exchange]) -> str:
    """The first few calls, each by its tool and what the target answered it."""
    return "; ".join(
        f"{e.request.get('name')}: {literal((e.response.text or e.response.outcome.value)[:QUOTED])}"
        for e in calls[:3]
    )


def _unasked_where_it_shows(transcript: Transcript) -> list[str]:
    """The probes left unasked while the question was open (`WHILE_ASKING`) where the effect may show.

    Any of them when the controls saw the effect nowhere in particular; else only those
    among the places where the honest approval's effect showed.
    """
    unasked = unasked_while_asking(transcript.observed_before, transcript.observed_after)
    if not transcript.effect_places:
        return unasked
    shown = [where_of(place) for place in transcript.effect_places]
    return [name for name in unasked if any(probe_of(where, [name.split("@")[0]]) for where in shown)]


def _around_the_gate(transcript: Transcript, effect: Effect) -> tuple[Verdict | None, str] | None:
    """For an attack judged at the gate (ungated): its verdict from where its effect showed, or why none counts.

    None: not judged so. The same change at the same place as the honest approval's
    is the gated harm (vulnerable); another change there is the attack's
    `effect_verdict`; a change anywhere else is no effect of it (a verdict of None).
    """
    if transcript.gate is None:
        return None
    places = [
        *disk_places(effect.removed, effect.changed, transcript.case_dir),
        *probe_places(
            transcript.observed_before or {}, transcript.observed_after or {}, transcript.bookkeeping
        ),
    ]
    same, there = at_the_gate(places, transcript.gate.places)
    # A one-line text changed in another part than the gated action changes (a note beside the status):
    # one place, but not the gated change, nor where it shows; told apart by the words each replaced.
    worded = transcript.gate.reworded
    if worded and (same or there):
        own = reworded(
            transcript.observed_before or {}, transcript.observed_after or {}, transcript.bookkeeping
        )
        apart = [p for p in (*same, *there) if p in worded and p in own and another_part(worded[p], own[p])]
        same, there = [p for p in same if p not in apart], [p for p in there if p not in apart]
    else:
        own, apart = {}, []
    verdict, why = transcript.effect_verdict or (Verdict.WEAK, "another tool acted without asking")
    if same:
        return Verdict.VULNERABLE, f"{why}, with the gated action's own effect: {', '.join(same[:4])}"
    if there and not transcript.gate.staged:
        said = f"{why}, where the gated action's effect shows: {', '.join(there[:4])}"
        if all(p.startswith(f"{REWRITTEN} root/") for p in there):
            # Only a file's bytes: another table or key of it is as likely as the gated one (finamatik-ops-mcp's
            # ops.db, with no profile). Said, so a reviewer weighs it, and how to judge it by its rows.
            said += (
                " (the file as a whole: nothing read it by rows; an effect: in a profile that reads it, an "
                "sqlite query or a file, judges by them)"
            )
        return verdict, said
    gated = ", ".join(sorted(where_it_shows(transcript.gate.places))[:4])
    if there:
        staged = ", ".join(there[:4])
        return (
            None,
            f"nothing of the gated action's own kind moved ({gated}); the setup calls it ran changed {staged}",
        )
    elsewhere = [*effect.removed, *effect.changed, *effect.observed]
    moved = f" (what changed elsewhere: {', '.join(elsewhere[:4])})" if elsewhere else ""
    if apart:
        # Quoted by the words: the reader sees which part of the text moved, and that it is not the gated one.
        parts = "; ".join(
            f"{p}: {_words(own[p])}, where the gated action {_words(worded[p])}" for p in apart[:2]
        )
        moved += f" (another part of the same text changed: {parts})"
    return None, f"nothing moved where the gated action's effect shows ({gated}){moved}"


def _words(change: tuple[frozenset[str], frozenset[str]]) -> str:
    gone, new = (", ".join(literal(w[:40]) for w in sorted(side)[:3]) or "nothing" for side in change)
    return f"replaced {gone} with {new}"


def _the_subjects_own(effect: Effect, case_dir: str | None) -> list[str]:
    """Of an effect, what is the action's own subject when no honest flow taught where it shows.

    With `case_dir` (a family that said only its case counts): the case's own files (the file the
    call names, its directory), anything outside the root (never bookkeeping), and what a probe of
    the action saw. Without (a switch that prunes a row of a file every use shares), all of it.
    """
    touched = [*effect.removed, *effect.changed]
    if case_dir is not None:
        touched = [
            p for p in touched if p == case_dir or p.startswith(f"{case_dir}/") or not p.startswith("root/")
        ]
    return [*touched, *effect.observed]


def effect_of(transcript: Transcript) -> Effect:
    """What the attack changed: the sandbox diff and every probe's changes, less the bookkeeping."""
    if transcript.before is None or transcript.after is None:
        return Effect()
    disk = diff(transcript.before, transcript.after)
    patterns = transcript.bookkeeping
    # Added entries are filtered too: the evidence must not list a log the profile called bookkeeping.
    keep = [p for p in (*disk.removed, *disk.changed, *disk.added) if not is_ignored(p, patterns)]
    observed, ignored = probe_changes(
        transcript.observed_before or {}, transcript.observed_after or {}, patterns
    )
    skipped = [p for p in (*disk.removed, *disk.changed, *disk.added) if p not in keep]
    return Effect(
        removed=tuple(p for p in disk.removed if p in keep),
        changed=tuple(p for p in disk.changed if p in keep),
        added=tuple(p for p in disk.added if p in keep),
        observed=tuple(observed),
        ignored=tuple(sorted({*skipped, *ignored})),
    )


def _same_input(a: Exchange, b: Exchange) -> bool:
    # The state is not part of the input: each process mints its own.
    def strip(request: Any) -> dict[str, Any]:
        return {k: v for k, v in request.items() if k != "requestState"}

    return strip(a.request) == strip(b.request)


# Generated attacks send hundreds of requests; evidence keeps both ends (the
# last one is the shrunk failing example) and says how many it left out.
_EVIDENCE_HEAD, _EVIDENCE_TAIL = 6, 8


def _evidence(transcript: Transcript, effect: Effect) -> tuple[str, ...]:
    exchanges = transcript.exchanges
    if len(exchanges) > _EVIDENCE_HEAD + _EVIDENCE_TAIL + 1:
        left_out = len(exchanges) - _EVIDENCE_HEAD - _EVIDENCE_TAIL
        lines = [describe(e) for e in exchanges[:_EVIDENCE_HEAD]]
        lines.append(f"... {left_out} more exchanges of the same kind ...")
        lines.extend(describe(e) for e in exchanges[-_EVIDENCE_TAIL:])
    else:
        lines = [describe(e) for e in exchanges]
    for label, paths in (("removed", effect.removed), ("changed", effect.changed), ("added", effect.added)):
        if paths:
            # Paths are escaped too: a hostile file name must not break the evidence.
            shown = (escaped(path)[1:-1] for path in paths[:8])
            lines.append(f"disk {label}: {', '.join(shown)}")
    if effect.observed:
        shown = (json.dumps(path, ensure_ascii=True)[1:-1] for path in effect.observed[:8])
        lines.append(f"effect seen: {', '.join(shown)}")
    if effect.ignored:
        shown = (json.dumps(path, ensure_ascii=True)[1:-1] for path in effect.ignored[:8])
        lines.append(f"ignored as bookkeeping: {', '.join(shown)}")
    lines.extend(f"note: {n}" for n in transcript.notes)
    for part in transcript.parts:
        lines.extend(reading_of(part).evidence(part))
    lines.extend(f"{level.value}: {message}" for level, message in transcript.findings)
    return tuple(lines)


def describe(exchange: Exchange) -> str:
    """One line per direction, the way a reviewer reads a wire log: every message whole.

    audit.json keeps these lines as they are; review.md and the terminal
    shorten them for reading (report.document.shorten).
    """
    req = exchange.request
    # Phase and Outcome are StrEnums: formatted, a member is its value (no `.value` descriptor call).
    line = f"[{exchange.phase}] {exchange.label} -> {req.get('name')}({literal(req.get('arguments'))})"
    if "requestState" in req:
        line += f" state={literal(req['requestState'])}"
    if "inputResponses" in req:
        line += f" answers={literal(req['inputResponses'])}"
    resp = exchange.response
    back = f" <- {resp.outcome}"
    if resp.code is not None:
        back += f" {resp.code}"
    # A reply's text and a question's words are str: escaped as `literal` would, without its dispatch.
    if resp.text:
        back += f" {escaped(resp.text)}"
    if resp.data is not None:
        back += f" data={literal(resp.data)}"
    for question in resp.questions:
        back += f" [asked {question.key}: {escaped(question.message or question.method)}]"
    return line + back
