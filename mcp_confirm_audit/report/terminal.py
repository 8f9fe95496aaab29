"""The terminal summary: what was judged, the controls, verdicts by family, the findings, the files.

One row per attack, findings first; attacks left unjudged because the
honest flow failed are counted in the family table, not listed, since their
control already says why (a run whose target hangs in the honest flow stays
a screenful, not a page per attack).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..engine.baseline import ACCEPTED, DRIFT, STALE
from ..models import Result, Verdict
from .document import AuditReport, headline, refused_by, shorten

_ORDER = {
    Verdict.VULNERABLE: 0,
    Verdict.WEAK: 1,
    Verdict.INCONCLUSIVE: 2,
    Verdict.REFUSED: 3,
    Verdict.NOT_APPLICABLE: 4,
    Verdict.EXCLUDED: 5,
}
_COLUMNS = (
    Verdict.VULNERABLE,
    Verdict.WEAK,
    Verdict.REFUSED,
    Verdict.INCONCLUSIVE,
    Verdict.NOT_APPLICABLE,
    Verdict.EXCLUDED,
)


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def _unjudged_for_the_controls(r: Result) -> bool:
    return r.verdict is Verdict.INCONCLUSIVE and r.reason.startswith("honest flow failed")


def summary(report: AuditReport, paths: Sequence[Path]) -> list[str]:
    lines = [f"judged: {shorten(headline(report))}"]
    for control in report.controls:
        state = "n/a" if not control.applicable else ("ok" if control.passed else "FAILED")
        lines.append(shorten(f"control {control.name:<9} [{control.tool}] {state}: {control.detail}"))
    shown = [r for r in report.results if not _unjudged_for_the_controls(r)]
    # A tool whose honest flow failed gets one line, not a table row per family of the same reason.
    unjudged = Counter(r.tool for r in report.results if _unjudged_for_the_controls(r))
    lines.extend(by_family(shown))
    lines.extend(
        f"{tool}: {count} attack(s) not judged: the honest flow failed (its control says why)"
        for tool, count in sorted(unjudged.items())
    )
    if shown:
        rows = [("attack", "tool", "verdict", "severity", "refused by", "baseline")]
        for r in sorted(shown, key=lambda r: (_ORDER[r.verdict], r.tool, r.id)):
            mark = report.mark(r)
            severity = r.rated_severity if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK) else "-"
            rows.append(
                (
                    f"{r.id} {r.variant}",
                    r.tool,
                    r.verdict.value,
                    severity,
                    refused_by(r),
                    mark.status if mark else "",
                )
            )
        lines.extend(_columns(rows))
    verdicts = Counter(r.verdict.value for r in report.results)
    layers = Counter(r.layer.value for r in report.results if r.verdict is Verdict.REFUSED and r.layer)
    lines.append("verdicts: " + (", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) or "-"))
    lines.append("refused by: " + (", ".join(f"{k} {v}" for k, v in sorted(layers.items())) or "-"))
    if report.baseline is not None:
        marks = Counter(m.status for m in report.marks.values())
        stale = marks[STALE] + len(report.unmatched)
        lines.append(
            f"baseline {report.baseline}: {marks[ACCEPTED]} accepted, {stale} stale, {marks[DRIFT]} layer drift"
        )
        lines.extend(f"  stale: {entry}" for entry in report.unmatched)
    lines.extend(f"report: {path}" for path in paths)
    return lines


def by_family(results: Sequence[Result]) -> list[str]:
    """One row per family and tool: how many attacks, and how many of each verdict."""
    groups: dict[tuple[str, str], Counter[Verdict]] = {}
    for r in results:
        groups.setdefault((r.family, r.tool), Counter())[r.verdict] += 1
    if not groups:
        return []
    rows = [("family", "tool", "attacks", *(v.value for v in _COLUMNS))]
    for (family, tool), counts in sorted(groups.items()):
        cells = (str(counts[v]) if counts[v] else "." for v in _COLUMNS)
        rows.append((family, tool, str(sum(counts.values())), *cells))
    return _columns(rows)
