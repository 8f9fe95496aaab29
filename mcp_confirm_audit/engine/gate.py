"""What a run's items make of its results and controls: the CI gate's exit status, pure.

Each attack item and each control item asks here what it is (passed, skipped, excused by the
baseline, warned, failed, or an error), so `--mcp-baseline`'s exit status is a function of two
result sets and a baseline: the items on any xdist worker and a test that holds an audit's
results reach the same answer without running pytest again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..models import ControlResult, Result, Verdict
from .baseline import ACCEPTED, CONTROLS, DRIFT, STALE, Baseline, Mark

PASSED = "passed"
SKIPPED = "skipped"
EXCUSED = "excused"  # an accepted finding: xfail
WARNED = "warned"  # passes, with a warning (weak, or layer drift)
FAILED = "failed"
ERROR = "error"  # not judged: never a pass

_FAILING = (FAILED, ERROR)

# The controls that are pytest items of their own, for every audited tool: an MRTR flow's "no"
# is a decline, a cancel or a negative answer; a token or pending flow's is its preview alone.
CONTROL_ITEMS = ("approve", *CONTROLS)


@dataclass(frozen=True, slots=True)
class Gate:
    """What one item does: its outcome, the line it says, and the baseline's mark if any."""

    outcome: str
    said: str
    mark: Mark | None = None

    @property
    def fails(self) -> bool:
        return self.outcome in _FAILING


def attack_gate(result: Result, baseline: Baseline | None, *, strict: bool = False) -> Gate:
    """What the attack item of `result` does under `baseline` (and --mcp-strict)."""
    if result.verdict is Verdict.INCONCLUSIVE:
        return Gate(ERROR, result.reason)
    mark = baseline.mark(result) if baseline is not None else None
    drifted = ""
    if baseline is not None and mark is not None:
        if mark.status == STALE:
            return Gate(FAILED, f"STALE baseline entry in {baseline.source}: {mark.reason}; remove it", mark)
        if mark.status == ACCEPTED:
            return Gate(EXCUSED, f"baselined in {baseline.source}: {mark.reason}", mark)
        if mark.status == DRIFT:
            if strict:
                return Gate(
                    FAILED, f"LAYER DRIFT (--mcp-strict): {mark.reason}, as {baseline.source} says", mark
                )
            drifted = f"{result.id} layer drift on {result.tool}: {mark.reason}"
    if result.verdict in (Verdict.NOT_APPLICABLE, Verdict.EXCLUDED):
        return Gate(SKIPPED, result.reason, mark)
    if result.verdict is Verdict.VULNERABLE:
        return Gate(FAILED, f"VULNERABLE: {result.reason}", mark)
    if result.verdict is Verdict.WEAK:
        if strict:
            return Gate(FAILED, f"WEAK (--mcp-strict): {result.reason}", mark)
        return Gate(WARNED, f"{result.id} weak on {result.tool}: {result.reason}", mark)
    return Gate(WARNED, drifted, mark) if drifted else Gate(PASSED, "", mark)


def control_gate(control: ControlResult | None, name: str, baseline: Baseline | None = None) -> Gate:
    """What a control's item does: the approve control not passing is an error, another one a failure.

    A failing control the baseline accepts (`control-NAME`) is excused; once it passes, stale.
    """
    if name == "approve" and (control is None or not control.passed):
        return Gate(ERROR, control.detail if control else "not run")
    if control is None:
        return Gate(SKIPPED, "not run: the approve control failed")
    if not control.applicable:
        return Gate(SKIPPED, control.detail)
    mark = baseline.mark_control(control) if baseline is not None else None
    if baseline is not None and mark is not None:
        if mark.status == STALE:
            return Gate(FAILED, f"STALE baseline entry in {baseline.source}: {mark.reason}; remove it", mark)
        return Gate(EXCUSED, f"baselined in {baseline.source}: {mark.reason}", mark)
    if not control.passed:
        return Gate(FAILED, f"control {name} on {control.tool}: {control.detail}")
    return Gate(PASSED, "")


def failing(
    results: Iterable[Result],
    controls: Iterable[ControlResult],
    baseline: Baseline | None,
    *,
    tools: Sequence[str] | None = None,
    strict: bool = False,
) -> list[str]:
    """Why a run of these results and controls under `baseline` exits 1, one line each; [] exits 0.

    `tools` are the tools the run audited (a baseline entry naming another is stale).
    """
    results = list(results)
    lines = []
    for control in controls:
        if control.name not in CONTROL_ITEMS:
            continue
        gate = control_gate(control, control.name, baseline)
        if gate.fails:
            lines.append(f"control {control.name} on {control.tool}: {gate.outcome}, {gate.said}")
    for result in results:
        gate = attack_gate(result, baseline, strict=strict)
        if gate.fails:
            lines.append(f"{result.id} on {result.tool}: {gate.outcome}, {gate.said}")
    if baseline is not None:
        lines.extend(baseline.unmatched(results, tools))
    return lines
