"""The CI gate: known findings excused with a reason, fixed ones caught as stale.

A baseline (YAML or JSON) has two lists. `findings` accepts results that are
vulnerable (or weak) today, each with the reason it is accepted; once such a
finding is no longer found, the entry is stale and fails the run, so a
baseline can only shrink by being edited. `layers` pins which layer refuses an
attack; a refusal by another layer is layer drift. Checking a result against
a baseline is a pure function, so the items (on any xdist worker) and the
reports (on the controller) reach the same answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..catalogue.loader import Catalogue
from ..errors import UsageError
from ..models import ControlResult, Layer, Result, Verdict
from ..profile.contract import says_nothing
from ..profile.yamlfile import read_yaml

ACCEPTED = "accepted"
STALE = "stale"
DRIFT = "layer-drift"

_FINDINGS = (Verdict.VULNERABLE, Verdict.WEAK)
# The controls a baseline may accept as failing, by the id `control-NAME`: each says the gate acts
# on a "no" (a decline, a cancel, a negative answer, the preview alone), which is a finding of its
# own. The approve control cannot be accepted: without an honest flow nothing is judged.
CONTROLS = ("preview-alone", "decline", "cancel", "negative")
CONTROL_PREFIX = "control-"
_REFUSING = tuple(layer for layer in Layer if layer not in (Layer.NONE, Layer.TRANSPORT))


@dataclass(frozen=True, slots=True)
class AcceptedFinding:
    id: str
    tool: str
    reason: str
    variant: str | None = None
    verdict: Verdict | None = None  # None: any finding verdict


@dataclass(frozen=True, slots=True)
class ExpectedLayer:
    id: str
    tool: str
    layer: Layer


@dataclass(frozen=True, slots=True)
class Mark:
    """What the baseline says about one result."""

    status: str  # ACCEPTED, STALE or DRIFT
    reason: str
    expected: str  # the accepted verdict, or the layer expected to refuse

    def as_dict(self) -> dict[str, str]:
        return {"status": self.status, "reason": self.reason, "expected": self.expected}


@dataclass(frozen=True, slots=True)
class Baseline:
    source: str
    findings: tuple[AcceptedFinding, ...] = ()
    layers: tuple[ExpectedLayer, ...] = ()
    retired: frozenset[str] = frozenset()

    def mark(self, result: Result) -> Mark | None:
        accepted = next((f for f in self.findings if (f.id, f.tool) == (result.id, result.tool)), None)
        if accepted is not None:
            return _judge_finding(accepted, result)
        expected = next((e for e in self.layers if (e.id, e.tool) == (result.id, result.tool)), None)
        if (
            expected is not None
            and result.verdict in (Verdict.REFUSED, Verdict.WEAK)
            and result.layer is not None
            and result.layer is not expected.layer
        ):
            return Mark(
                DRIFT, f"refused by {result.layer.value}, not by {expected.layer.value}", expected.layer.value
            )
        return None

    def mark_control(self, control: ControlResult) -> Mark | None:
        """An accepted failing control: accepted while it still fails, stale once it passes."""
        key = (CONTROL_PREFIX + control.name, control.tool)
        accepted = next((f for f in self.findings if (f.id, f.tool) == key), None)
        if accepted is None or not control.applicable:
            return None
        if control.passed:
            return Mark(STALE, f"the {control.name} control no longer fails: {accepted.reason}", "failed")
        return Mark(ACCEPTED, accepted.reason, "failed")

    def unmatched(self, results: Iterable[Result], tools: Sequence[str] | None) -> list[str]:
        """Accepted findings no result of this run can ever match: stale too.

        Entries merely deselected (-k) are not stale: nothing was learned about them.
        """
        seen = {(r.id, r.tool) for r in results}
        stale = []
        for entry in self.findings:
            if (entry.id, entry.tool) in seen or (entry.id.startswith(CONTROL_PREFIX) and tools is None):
                continue
            if entry.id in self.retired:
                stale.append(
                    f"{entry.id} on {entry.tool}: the attack is retired, so it can no longer be found"
                )
            elif tools is not None and entry.tool not in tools:
                stale.append(f"{entry.id} on {entry.tool}: the target no longer offers that tool for audit")
        return stale


def _judge_finding(accepted: AcceptedFinding, result: Result) -> Mark | None:
    wanted = accepted.verdict.value if accepted.verdict else "vulnerable or weak"
    if result.verdict in (Verdict.INCONCLUSIVE, Verdict.EXCLUDED):
        return None  # not judged (or left out by the profile), so neither excused nor stale
    if result.verdict not in _FINDINGS:
        return Mark(STALE, f"no longer found (now {result.verdict.value}): {accepted.reason}", wanted)
    if accepted.verdict is None or accepted.verdict is result.verdict:
        return Mark(ACCEPTED, accepted.reason, wanted)
    if result.verdict is Verdict.WEAK:
        return Mark(STALE, f"now only weak, not vulnerable: {accepted.reason}", wanted)
    return None  # accepted as weak but now vulnerable: worse, so a finding again


def load_baseline(path: Path, catalogue: Catalogue) -> Baseline:
    # JSON is YAML too.
    raw = read_yaml(
        path, "baseline", f"write one: mcp-confirm-audit baseline AUDIT.json -o {path}", kind="YAML or JSON"
    )
    return baseline_from_mapping(raw, catalogue, source=str(path))


def baseline_from_mapping(raw: Any, catalogue: Catalogue, *, source: str) -> Baseline:
    def fail(message: str) -> UsageError:
        return UsageError(f"baseline {source}: {message}")

    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise fail("must be a mapping with 'findings' and/or 'layers' lists")
    unknown = sorted(set(raw) - {"version", "findings", "layers"})
    if unknown:
        raise fail(f"unknown key {unknown[0]!r}; known keys: findings, layers, version")
    if raw.get("version", 1) != 1:
        raise fail(f"version {raw.get('version')!r} is not supported; this mcp-confirm-audit reads version 1")
    specs = {spec.id: spec for spec in catalogue.attacks}
    findings, layers, seen = [], [], set()
    for index, entry in enumerate(_entries(raw, "findings", fail)):
        where = f"findings[{index}]"
        key = _key(entry, where, specs, fail, optional={"variant", "verdict"}, required={"reason"})
        reason = entry["reason"]
        if not isinstance(reason, str) or says_nothing(reason):
            said = (
                f" ({shorten_reason(reason)!r} is a placeholder)"
                if isinstance(reason, str) and reason.strip()
                else ""
            )
            raise fail(f"{where} ({key[0]}): 'reason' must say why the finding is accepted{said}; write it")
        verdict = entry.get("verdict")
        if verdict is not None and verdict not in {v.value for v in _FINDINGS}:
            raise fail(f"{where} ({key[0]}): 'verdict' must be vulnerable or weak, got {verdict!r}")
        findings.append(
            AcceptedFinding(
                *key,
                reason=reason.strip(),
                variant=entry.get("variant"),
                verdict=Verdict(verdict) if verdict else None,
            )
        )
        seen.add(key)
    for index, entry in enumerate(_entries(raw, "layers", fail)):
        where = f"layers[{index}]"
        key = _key(entry, where, specs, fail, optional={"variant", "reason"}, required={"layer"})
        if entry["layer"] not in {layer.value for layer in _REFUSING}:
            allowed = ", ".join(layer.value for layer in _REFUSING)
            raise fail(f"{where} ({key[0]}): 'layer' must be one of {allowed}, got {entry['layer']!r}")
        if key in seen:
            raise fail(f"{key[0]} on {key[1]} is both an accepted finding and an expected refusal; keep one")
        layers.append(ExpectedLayer(*key, layer=Layer(entry["layer"])))
    retired = frozenset(spec.id for spec in catalogue.attacks if spec.status != "active")
    return Baseline(source, tuple(findings), tuple(layers), retired)


def shorten_reason(reason: str, limit: int = 40) -> str:
    return reason if len(reason) <= limit else reason[: limit - 3] + "..."


def _entries(raw: Mapping[str, Any], name: str, fail: Any) -> list[Mapping[str, Any]]:
    entries = raw.get(name) or []
    if not isinstance(entries, list) or not all(isinstance(e, Mapping) for e in entries):
        raise fail(f"'{name}' must be a list of mappings, each with 'id' and 'tool'")
    return entries


def _key(
    entry: Mapping[str, Any],
    where: str,
    specs: Mapping[str, Any],
    fail: Any,
    *,
    optional: set[str],
    required: set[str],
) -> tuple[str, str]:
    attack_id, tool = entry.get("id"), entry.get("tool")
    if not isinstance(attack_id, str) or not isinstance(tool, str) or not tool:
        raise fail(f"{where} needs 'id' (an attack id) and 'tool' (the tool it was found on)")
    if attack_id.startswith(CONTROL_PREFIX) and attack_id.removeprefix(CONTROL_PREFIX) in CONTROLS:
        if "verdict" in entry or "variant" in entry or "layer" in entry:
            raise fail(
                f"{where} ({attack_id}): a control is accepted as failing: give it only id, tool and reason"
            )
        return attack_id, tool
    if attack_id not in specs:
        raise fail(
            f"{where}: {attack_id!r} is not in the catalogue; list the ids with 'mcp-confirm-audit catalogue'"
        )
    extra = sorted(set(entry) - {"id", "tool"} - optional - required)
    if extra:
        raise fail(f"{where} ({attack_id}): unknown key {extra[0]!r}")
    missing = sorted(required - set(entry))
    if missing:
        raise fail(f"{where} ({attack_id}): '{missing[0]}' is missing")
    variant = entry.get("variant")
    if variant is not None and variant != specs[attack_id].slug:
        raise fail(f"{where}: {attack_id} is the variant {specs[attack_id].slug!r}, not {variant!r}")
    return attack_id, tool
