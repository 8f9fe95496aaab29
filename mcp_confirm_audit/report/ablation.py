"""The ablation table: for each attack the SDK's boundary refused, what refuses it without the boundary.

It answers, per attack, "is this guard load-bearing or redundant?": the
question that exposed a hand-rolled state signer duplicating the SDK's seal.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models import Result


def ablation_summary(results: Sequence[Result]) -> list[str]:
    ablated = sorted((r for r in results if r.ablation is not None), key=lambda r: (r.tool, r.id))
    if not ablated:
        return []
    lines = ["ablation: each attack again, with the SDK's request-state boundary removed"]
    rows = [("attack", "tool", "without sdk-boundary", "refused on its own by", "sdk-boundary is")]
    for r in ablated:
        assert r.ablation is not None
        a = r.ablation
        outcome = a.verdict.value + (f" ({a.layer.value})" if a.layer and a.verdict.value != "vulnerable" else "")
        alone = ", ".join(layer.value for layer in a.refused_alone_by)
        rows.append((f"{r.id} {r.variant}", r.tool, outcome, alone, a.removed_guard))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return lines
