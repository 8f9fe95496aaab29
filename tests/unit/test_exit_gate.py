"""The CI gate as a pure function: what each item of a run does, and why a run exits 1."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_baseline import ACCEPT_REPLAY, baseline, result

from mcp_confirm_audit.catalogue.loader import Catalogue, load_catalogue
from mcp_confirm_audit.engine.baseline import baseline_from_mapping
from mcp_confirm_audit.engine.gate import (
    ERROR,
    EXCUSED,
    FAILED,
    PASSED,
    SKIPPED,
    WARNED,
    attack_gate,
    control_gate,
    failing,
)
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.models import ControlResult, Layer, Verdict
from mcp_confirm_audit.report.baseline_file import baseline_from_audit

V, W, R = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue()


@pytest.mark.parametrize(
    ("verdict", "layer", "strict", "outcome"),
    [
        (R, Layer.TOOL, False, PASSED),
        (V, Layer.NONE, False, FAILED),
        (W, Layer.TOOL, False, WARNED),
        (W, Layer.TOOL, True, FAILED),
        (Verdict.INCONCLUSIVE, None, False, ERROR),
        (Verdict.NOT_APPLICABLE, None, False, SKIPPED),
        (Verdict.EXCLUDED, None, False, SKIPPED),
    ],
)
def test_without_a_baseline_each_verdict_is_its_outcome(
    verdict: Verdict, layer: Layer | None, strict: bool, outcome: str
) -> None:
    assert attack_gate(result("MCA-REPLAY-001", verdict, layer), None, strict=strict).outcome == outcome


def test_a_baselined_finding_is_excused_and_once_fixed_fails_as_stale(catalogue: Catalogue) -> None:
    gate = baseline(catalogue, findings=[ACCEPT_REPLAY])
    excused = attack_gate(result("MCA-REPLAY-001", V, Layer.NONE), gate)
    assert (excused.outcome, excused.said) == (EXCUSED, "baselined in b.yaml: tracked as #12")
    stale = attack_gate(result("MCA-REPLAY-001", R, Layer.TOOL), gate)
    assert stale.outcome == FAILED
    assert stale.said.startswith("STALE baseline entry in b.yaml: no longer found (now refused)")


def test_a_baseline_never_excuses_an_inconclusive_result(catalogue: Catalogue) -> None:
    gate = baseline(catalogue, findings=[ACCEPT_REPLAY])
    assert attack_gate(result("MCA-REPLAY-001", Verdict.INCONCLUSIVE, None), gate).outcome == ERROR


def test_layer_drift_warns_and_fails_only_under_strict(catalogue: Catalogue) -> None:
    gate = baseline(catalogue, layers=[{"id": "MCA-REPLAY-001", "tool": "delete_file", "layer": "tool"}])
    drifted = result("MCA-REPLAY-001", R, Layer.SDK_BOUNDARY)
    assert attack_gate(drifted, gate).outcome == WARNED
    assert attack_gate(drifted, gate, strict=True).outcome == FAILED


def test_a_control_that_fails_fails_the_run_and_a_failed_approve_is_an_error() -> None:
    def control(name: str, passed: bool, applicable: bool = True) -> ControlResult:
        return ControlResult("delete_file", name, passed, applicable, f"{name} detail")

    assert control_gate(control("decline", False), "decline").outcome == FAILED
    assert control_gate(control("decline", False, applicable=False), "decline").outcome == SKIPPED
    assert control_gate(control("approve", False), "approve").outcome == ERROR
    assert control_gate(None, "approve").outcome == ERROR
    assert control_gate(None, "decline").outcome == SKIPPED
    # Only the controls that are items of their own can fail a run.
    assert failing([], [control("bookkeeping", False)], None) == []
    assert failing([], [control("decline", False)], None) == [
        "control decline on delete_file: failed, control decline on delete_file: decline detail"
    ]


def test_a_run_exits_0_only_with_every_finding_baselined_and_no_entry_unmatched(catalogue: Catalogue) -> None:
    found = [result("MCA-REPLAY-001", V, Layer.NONE), result("MCA-REPLAY-002", R, Layer.TOOL)]
    assert failing(found, [], None) == ["MCA-REPLAY-001 on delete_file: failed, VULNERABLE: why"]
    assert failing(found, [], baseline(catalogue, findings=[ACCEPT_REPLAY])) == []
    gone = {**ACCEPT_REPLAY, "tool": "gone_tool"}
    lines = failing(found, [], baseline(catalogue, findings=[ACCEPT_REPLAY, gone]), tools=["delete_file"])
    assert lines == ["MCA-REPLAY-001 on gone_tool: the target no longer offers that tool for audit"]


def test_a_control_that_fails_is_accepted_by_its_id_and_once_it_passes_is_stale(catalogue: Catalogue) -> None:
    negative = ControlResult(
        "delete_file", "negative", False, True, "the victim was removed after a negative"
    )
    written = baseline_from_audit({"results": [], "controls": [negative.as_dict()]}, "a run")
    assert "id: control-negative" in written
    accepted = baseline(
        catalogue, findings=[{"id": "control-negative", "tool": "delete_file", "reason": "#7"}]
    )
    assert control_gate(negative, "negative", accepted).outcome == EXCUSED
    assert failing([], [negative], accepted, tools=["delete_file"]) == []
    fixed = ControlResult("delete_file", "negative", True, True, "no effect")
    stale = control_gate(fixed, "negative", accepted)
    assert (stale.outcome, stale.said) == (
        FAILED,
        "STALE baseline entry in b.yaml: the negative control no longer fails: #7; remove it",
    )


def test_the_approve_control_cannot_be_accepted(catalogue: Catalogue) -> None:
    with pytest.raises(UsageError, match="'control-approve' is not in the catalogue"):
        baseline(catalogue, findings=[{"id": "control-approve", "tool": "delete_file", "reason": "#7"}])


def test_the_how_to_page_s_baseline_is_one_the_gate_reads(catalogue: Catalogue) -> None:
    page = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "baseline-a-failing-control.md"
    block = page.read_text(encoding="utf-8").split("```yaml\n", 1)[1].split("```", 1)[0]
    read = baseline_from_mapping(yaml.safe_load(block), catalogue, source="the page")
    assert [f.id for f in read.findings] == ["MCA-CONSENT-001", "control-decline"]
