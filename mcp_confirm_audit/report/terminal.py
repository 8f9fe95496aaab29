"""The terminal summary: one row per attack, the layer that refused it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ..models import ControlResult, Result, Verdict

_ORDER = {Verdict.VULNERABLE: 0, Verdict.WEAK: 1, Verdict.INCONCLUSIVE: 2, Verdict.REFUSED: 3, Verdict.NOT_APPLICABLE: 4}


def summary(results: Sequence[Result], controls: Sequence[ControlResult], paths: Sequence[Path]) -> list[str]:
    lines = []
    for control in sorted(controls, key=lambda c: (c.tool, c.name)):
        state = "n/a" if not control.applicable else ("ok" if control.passed else "FAILED")
        lines.append(f"control {control.name:<9} [{control.tool}] {state}: {control.detail}")
    rows = [("attack", "tool", "verdict", "refused by", "asked user")]
    for r in sorted(results, key=lambda r: (_ORDER[r.verdict], r.tool, r.id)):
        layer = r.layer.value if r.layer and r.verdict in (Verdict.REFUSED, Verdict.WEAK) else "-"
        if r.verdict is Verdict.VULNERABLE:
            layer = "nothing"
        rows.append((f"{r.id} {r.variant}", r.tool, r.verdict.value, layer, "yes" if r.asked_user else "no"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    verdicts = Counter(r.verdict.value for r in results)
    layers = Counter(r.layer.value for r in results if r.verdict is Verdict.REFUSED and r.layer)
    lines.append("verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    lines.append("refused by: " + (", ".join(f"{k} {v}" for k, v in sorted(layers.items())) or "-"))
    lines.extend(f"report: {path}" for path in paths)
    return lines
