"""The terminal summary: one row per attack, the layer that refused it, the counts and the files."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..baseline import ACCEPTED, DRIFT, STALE
from ..models import Verdict
from .document import AuditReport

_ORDER = {
    Verdict.VULNERABLE: 0,
    Verdict.WEAK: 1,
    Verdict.INCONCLUSIVE: 2,
    Verdict.REFUSED: 3,
    Verdict.NOT_APPLICABLE: 4,
}


def summary(report: AuditReport, paths: Sequence[Path]) -> list[str]:
    lines = []
    for control in report.controls:
        state = "n/a" if not control.applicable else ("ok" if control.passed else "FAILED")
        lines.append(f"control {control.name:<9} [{control.tool}] {state}: {control.detail}")
    rows = [("attack", "tool", "verdict", "refused by", "asked user", "baseline")]
    for r in sorted(report.results, key=lambda r: (_ORDER[r.verdict], r.tool, r.id)):
        layer = r.layer.value if r.layer and r.verdict in (Verdict.REFUSED, Verdict.WEAK) else "-"
        if r.verdict is Verdict.VULNERABLE:
            layer = "nothing"
        mark = report.mark(r)
        rows.append(
            (
                f"{r.id} {r.variant}",
                r.tool,
                r.verdict.value,
                layer,
                "yes" if r.asked_user else "no",
                mark.status if mark else "",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    verdicts = Counter(r.verdict.value for r in report.results)
    layers = Counter(r.layer.value for r in report.results if r.verdict is Verdict.REFUSED and r.layer)
    lines.append("verdicts: " + (", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) or "-"))
    lines.append("refused by: " + (", ".join(f"{k} {v}" for k, v in sorted(layers.items())) or "-"))
    if report.baseline is not None:
        marks = Counter(m.status for m in report.marks.values())
        stale = marks[STALE] + len(report.unmatched)
        lines.append(
            f"baseline {report.baseline}: {marks[ACCEPTED]} accepted, {stale} stale, "
            f"{marks[DRIFT]} layer drift"
        )
        lines.extend(f"  stale: {entry}" for entry in report.unmatched)
    lines.extend(f"report: {path}" for path in paths)
    return lines
