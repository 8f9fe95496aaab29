"""What the terminal adds for request state in depth: fail-closed replicas and the ablation table.

A replica that refuses an honest approval minted on another is safe but breaks
users behind a load balancer; that is said plainly, not left in a reason. The
ablation table answers, per attack the SDK's boundary refused, "is this guard
load-bearing or redundant?": the question that exposed a hand-rolled state
signer duplicating the SDK's seal.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models import FAIL_CLOSED, Result, Verdict


def depth_summary(results: Sequence[Result]) -> list[str]:
    return [*fail_closed(results), *ablation_summary(results)]


def fail_closed(results: Sequence[Result]) -> list[str]:
    closed = [r for r in results if r.verdict is Verdict.REFUSED and FAIL_CLOSED in r.reason]
    return [f"{r.id} [{r.tool}] {r.reason}" for r in sorted(closed, key=lambda r: (r.tool, r.id))]


def ablation_summary(results: Sequence[Result]) -> list[str]:
    ablated = sorted((r for r in results if r.ablation is not None), key=lambda r: (r.tool, r.id))
    if not ablated:
        return []
    lines = ["ablation: each attack again, with the SDK's request-state boundary removed"]
    rows = [("attack", "tool", "without sdk-boundary", "refused on its own by", "sdk-boundary is")]
    for r in ablated:
        assert r.ablation is not None
        a = r.ablation
        outcome = a.verdict.value + (
            f" ({a.layer.value})" if a.layer and a.verdict.value != "vulnerable" else ""
        )
        alone = ", ".join(layer.value for layer in a.refused_alone_by)
        rows.append((f"{r.id} {r.variant}", r.tool, outcome, alone, a.removed_guard))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return lines
