"""Ablation answers "is this guard load-bearing or redundant?"; fail-closed replicas are said plainly.

Both survive the trip through reports.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from mcp_confirm_audit.models import FAIL_CLOSED, Ablation, Effect, Layer, Result, Verdict
from mcp_confirm_audit.report.depth import ablation_summary, fail_closed


def result(ablation: Ablation | None) -> Result:
    return Result(
        id="MCA-XTARGET-002",
        family="cross-target",
        title="t",
        tool="delete_file",
        variant="added-argument",
        severity="critical",
        level="MUST",
        verdict=Verdict.REFUSED,
        layer=Layer.SDK_BOUNDARY,
        asked_user=False,
        effect=Effect(),
        reason="Invalid or expired requestState",
        evidence=(),
        refs=(),
        ablation=ablation,
    )


@pytest.mark.parametrize(
    ("verdict", "layer", "alone", "guard"),
    [
        (Verdict.REFUSED, Layer.TOOL, (Layer.SDK_BOUNDARY, Layer.TOOL), "redundant"),
        (Verdict.VULNERABLE, Layer.NONE, (Layer.SDK_BOUNDARY,), "load-bearing"),
        (Verdict.WEAK, Layer.TOOL, (Layer.SDK_BOUNDARY,), "load-bearing"),
        (Verdict.NOT_APPLICABLE, None, (Layer.SDK_BOUNDARY,), "unknown"),
        (Verdict.INCONCLUSIVE, None, (Layer.SDK_BOUNDARY,), "unknown"),
    ],
)
def test_what_refuses_the_attack_without_the_boundary_says_whether_the_boundary_is_load_bearing(
    verdict: Verdict, layer: Layer | None, alone: tuple[Layer, ...], guard: str
) -> None:
    ablation = Ablation(Layer.SDK_BOUNDARY, verdict, layer, "r")
    assert (ablation.refused_alone_by, ablation.removed_guard) == (alone, guard)


def test_an_ablation_travels_through_json_and_back() -> None:
    original = result(Ablation(Layer.SDK_BOUNDARY, Verdict.VULNERABLE, Layer.NONE, "took effect", ("line",)))
    data = json.loads(json.dumps(original.as_dict()))
    assert data["ablation"]["refused_alone_by"] == ["sdk-boundary"]
    assert data["ablation"]["removed_guard"] == "load-bearing"
    assert Result.from_dict(data) == original
    assert Result.from_dict(json.loads(json.dumps(result(None).as_dict()))).ablation is None


def test_the_summary_lists_only_ablated_attacks_with_the_layers_that_refuse_them_alone() -> None:
    redundant = result(Ablation(Layer.SDK_BOUNDARY, Verdict.REFUSED, Layer.TOOL, "malformed"))
    lines = ablation_summary([redundant, result(None)])
    assert lines[0].startswith("ablation:")
    assert len(lines) == 3
    assert "sdk-boundary, tool" in lines[2]
    assert lines[2].rstrip().endswith("redundant")
    assert ablation_summary([result(None)]) == []


def test_an_honest_approval_refused_by_another_replica_gets_a_line_of_its_own() -> None:
    closed = replace(
        result(None), id="MCA-REPLICA-001", reason=f"fail-closed: refused by sdk-boundary; {FAIL_CLOSED}"
    )
    assert fail_closed([closed, result(None)]) == [f"MCA-REPLICA-001 [delete_file] {closed.reason}"]
