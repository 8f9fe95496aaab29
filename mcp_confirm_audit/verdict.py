"""The verdict: a pure function of a catalogue entry and a recorded transcript.

Order of judgement, most damning first: an effect on disk during the attack
is `vulnerable` whatever the target said; then findings about what the human
was shown; then the layer whose answer ended the attack. A refusal that cannot
be told apart from a crash is inconclusive, never a pass.
"""

from __future__ import annotations

import json
from typing import Any

from .models import (
    AttackSpec,
    Effect,
    Exchange,
    Layer,
    Outcome,
    Phase,
    Response,
    Result,
    Transcript,
    Verdict,
)
from .sandbox import diff


def layer_of(response: Response) -> Layer:
    if response.outcome is Outcome.TRANSPORT:
        return Layer.TRANSPORT
    if response.refused_by_boundary:
        return Layer.SDK_BOUNDARY
    if response.outcome is Outcome.RPC_ERROR:
        return Layer.PROTOCOL
    return Layer.TOOL


def judge(spec: AttackSpec, transcript: Transcript) -> Result:
    attack = [e for e in transcript.exchanges if e.phase is Phase.ATTACK]
    asked = any(e.response.outcome is Outcome.INPUT_REQUIRED for e in attack)
    effect = (
        diff(transcript.before, transcript.after)
        if transcript.before is not None and transcript.after is not None
        else Effect()
    )
    evidence = _evidence(transcript, effect)

    def result(verdict: Verdict, layer: Layer | None, reason: str) -> Result:
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
            refs=spec.refs,
        )

    if not transcript.precondition.ok:
        return result(Verdict.INCONCLUSIVE, None, f"honest flow failed: {transcript.precondition.reason}")
    if transcript.not_applicable:
        return result(Verdict.NOT_APPLICABLE, None, transcript.not_applicable)
    if effect.happened:
        touched = [*effect.removed, *effect.changed]
        lost = ", ".join(touched[:4])
        if transcript.changed_in_place and set(touched) <= set(transcript.changed_in_place):
            # Still the inode the user confirmed, but not the content they saw.
            reason = f"acted on a file that changed after the question: {lost}"
            return result(Verdict.WEAK, Layer.NONE, reason)
        return result(Verdict.VULNERABLE, Layer.NONE, f"the attack took effect on disk: {lost}")
    if transcript.setup_failure:
        return result(Verdict.INCONCLUSIVE, None, f"could not set the attack up: {transcript.setup_failure}")
    for severity in (Verdict.VULNERABLE, Verdict.WEAK):
        found = [message for level, message in transcript.findings if level is severity]
        if found:
            return result(severity, Layer.NONE, "; ".join(found))
    if not attack:
        return result(Verdict.INCONCLUSIVE, None, "no attack request was sent")
    decisive = attack[-1].response
    layer = layer_of(decisive)
    said = decisive.text or (decisive.outcome.value)
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
    if spec.reported_success is not None and decisive.outcome is Outcome.COMPLETE:
        reason = f"reported success for something it could not do: {said}"
        return result(spec.reported_success, Layer.NONE, reason)
    if layer not in spec.refused_by:
        allowed = ", ".join(x.value for x in spec.refused_by)
        return result(Verdict.WEAK, layer, f"refused by {layer.value}, where {allowed} should refuse it: {said}")
    if spec.refuse_before_asking and asked:
        return result(Verdict.WEAK, layer, f"refused only after asking the user: {said}")
    return result(Verdict.REFUSED, layer, said)


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
            shown = (json.dumps(path, ensure_ascii=True)[1:-1] for path in paths[:8])
            lines.append(f"disk {label}: {', '.join(shown)}")
    lines.extend(f"note: {n}" for n in transcript.notes)
    lines.extend(f"{level.value}: {message}" for level, message in transcript.findings)
    return tuple(lines)


def _short(value: Any, limit: int = 160) -> str:
    # Escaped, never raw: hostile names carry line breaks and bidi controls,
    # and evidence must show their exact code points, not be rearranged by them.
    text = json.dumps(value, ensure_ascii=True, sort_keys=True)
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 3 :]}({len(text)} chars)"


def describe(exchange: Exchange) -> str:
    """One line per direction, the way a reviewer reads a wire log."""
    req = exchange.request
    parts = [f"[{exchange.phase.value}] {exchange.label} -> {req.get('name')}({_short(req.get('arguments'))})"]
    if "requestState" in req:
        parts.append(f"state={_short(req['requestState'], 40)}")
    if "inputResponses" in req:
        parts.append(f"answers={_short(req['inputResponses'])}")
    resp = exchange.response
    back = f"<- {resp.outcome.value}"
    if resp.code is not None:
        back += f" {resp.code}"
    if resp.text:
        back += f" {_short(resp.text)}"
    if resp.data is not None:
        back += f" data={_short(resp.data, 80)}"
    for question in resp.questions:
        back += f" [asked {question.key}: {_short(question.message or question.method, 120)}]"
    return " ".join(parts) + " " + back
