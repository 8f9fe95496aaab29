"""The baseline: accepted findings pass, fixed ones are stale, unknown ids are usage errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from mcp_confirm_audit.catalogue.loader import Catalogue, load_catalogue
from mcp_confirm_audit.engine.baseline import (
    ACCEPTED,
    DRIFT,
    STALE,
    Baseline,
    baseline_from_mapping,
    load_baseline,
)
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.models import Effect, Layer, Result, Verdict
from mcp_confirm_audit.report.baseline_file import baseline_from_audit


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue()


def result(attack_id: str, verdict: Verdict, layer: Layer | None, tool: str = "delete_file") -> Result:
    return Result(
        attack_id,
        "replay",
        "t",
        tool,
        "after-success",
        "high",
        "MUST",
        verdict,
        layer,
        False,
        Effect(),
        "why",
        (),
        (),
    )


def baseline(catalogue: Catalogue, **raw: object) -> Baseline:
    return baseline_from_mapping(raw, catalogue, source="b.yaml")


ACCEPT_REPLAY = {"id": "MCA-REPLAY-001", "tool": "delete_file", "reason": "tracked as #12"}


def test_a_listed_finding_still_found_is_accepted_with_its_reason(catalogue: Catalogue) -> None:
    gate = baseline(catalogue, findings=[ACCEPT_REPLAY])
    mark = gate.mark(result("MCA-REPLAY-001", Verdict.VULNERABLE, Layer.NONE))
    assert mark is not None
    assert (mark.status, mark.reason) == (ACCEPTED, "tracked as #12")


def test_a_listed_finding_that_is_now_refused_or_not_applicable_is_stale(catalogue: Catalogue) -> None:
    gate = baseline(catalogue, findings=[ACCEPT_REPLAY])
    for verdict, layer in ((Verdict.REFUSED, Layer.TOOL), (Verdict.NOT_APPLICABLE, None)):
        mark = gate.mark(result("MCA-REPLAY-001", verdict, layer))
        assert mark is not None
        assert mark.status == STALE
        assert verdict.value in mark.reason


def test_an_inconclusive_result_is_neither_excused_nor_stale(catalogue: Catalogue) -> None:
    gate = baseline(catalogue, findings=[ACCEPT_REPLAY])
    assert gate.mark(result("MCA-REPLAY-001", Verdict.INCONCLUSIVE, None)) is None


def test_a_finding_accepted_as_weak_that_became_vulnerable_is_a_finding_again(catalogue: Catalogue) -> None:
    gate = baseline(catalogue, findings=[{**ACCEPT_REPLAY, "verdict": "weak"}])
    assert gate.mark(result("MCA-REPLAY-001", Verdict.VULNERABLE, Layer.NONE)) is None
    assert gate.mark(result("MCA-REPLAY-001", Verdict.WEAK, Layer.TOOL)).status == ACCEPTED  # type: ignore[union-attr]


def test_a_finding_on_another_tool_is_not_excused(catalogue: Catalogue) -> None:
    gate = baseline(catalogue, findings=[ACCEPT_REPLAY])
    assert gate.mark(result("MCA-REPLAY-001", Verdict.VULNERABLE, Layer.NONE, tool="remove_file")) is None


def test_a_refusal_by_another_layer_than_pinned_is_layer_drift(catalogue: Catalogue) -> None:
    gate = baseline(
        catalogue, layers=[{"id": "MCA-FORGE-001", "tool": "delete_file", "layer": "sdk-boundary"}]
    )
    assert gate.mark(result("MCA-FORGE-001", Verdict.REFUSED, Layer.SDK_BOUNDARY)) is None
    drift = gate.mark(result("MCA-FORGE-001", Verdict.REFUSED, Layer.TOOL))
    assert drift is not None
    assert drift.status == DRIFT
    assert drift.reason == "refused by tool, not by sdk-boundary"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"findings": [{"id": "MCA-NOPE-999", "tool": "t", "reason": "r"}]},
            "'MCA-NOPE-999' is not in the catalogue",
        ),
        ({"findings": [{"id": "MCA-REPLAY-001", "tool": "t"}]}, "'reason' is missing"),
        ({"findings": [{"id": "MCA-REPLAY-001", "tool": "t", "reason": " "}]}, "must say why"),
        ({"findings": [{"id": "MCA-REPLAY-001", "reason": "r"}]}, "needs 'id'"),
        (
            {"findings": [{**ACCEPT_REPLAY, "variant": "twice"}]},
            "is the variant 'after-success', not 'twice'",
        ),
        ({"findings": [{**ACCEPT_REPLAY, "verdict": "refused"}]}, "'verdict' must be vulnerable or weak"),
        ({"findings": [{**ACCEPT_REPLAY, "colour": "red"}]}, "unknown key 'colour'"),
        ({"layers": [{"id": "MCA-FORGE-001", "tool": "t", "layer": "none"}]}, "'layer' must be one of"),
        ({"accepted": []}, "unknown key 'accepted'"),
        ({"version": 2}, "version 2 is not supported"),
        ({"findings": {"id": "x"}}, "'findings' must be a list"),
    ],
)
def test_a_bad_baseline_is_a_usage_error_saying_what_to_fix(
    catalogue: Catalogue, raw: dict[str, object], message: str
) -> None:
    with pytest.raises(UsageError, match="^baseline b.yaml: .*" + re.escape(message)):
        baseline_from_mapping(raw, catalogue, source="b.yaml")


def test_a_missing_or_unparseable_file_is_a_usage_error(tmp_path: Path, catalogue: Catalogue) -> None:
    with pytest.raises(UsageError, match="does not exist; write one: mcp-confirm-audit baseline"):
        load_baseline(tmp_path / "nope.yaml", catalogue)
    broken = tmp_path / "broken.yaml"
    broken.write_text("findings: [\n")
    with pytest.raises(UsageError, match="not valid YAML or JSON"):
        load_baseline(broken, catalogue)


def test_json_baselines_are_read_too(tmp_path: Path, catalogue: Catalogue) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"version": 1, "findings": [ACCEPT_REPLAY]}))
    assert load_baseline(path, catalogue).findings[0].reason == "tracked as #12"


def test_entries_no_result_can_match_are_stale_but_deselected_ones_are_not(catalogue: Catalogue) -> None:
    gate = baseline(catalogue, findings=[ACCEPT_REPLAY, {**ACCEPT_REPLAY, "tool": "gone_tool"}])
    assert gate.unmatched([], tools=["delete_file"]) == [
        "MCA-REPLAY-001 on gone_tool: the target no longer offers that tool for audit"
    ]
    retired = Baseline("b.yaml", gate.findings, retired=frozenset({"MCA-REPLAY-001"}))
    assert len(retired.unmatched([], tools=None)) == 2


def test_a_baseline_written_from_a_report_accepts_its_findings_and_pins_its_layers(
    catalogue: Catalogue,
) -> None:
    results = [
        result("MCA-REPLAY-001", Verdict.VULNERABLE, Layer.NONE),
        result("MCA-FORGE-001", Verdict.REFUSED, Layer.SDK_BOUNDARY),
        result("MCA-FORGE-020", Verdict.NOT_APPLICABLE, None),
    ]
    document = {
        "schema_version": 1,
        "generated": "2026-07-28T12:00:00+00:00",
        "results": [r.as_dict() for r in results],
    }
    text = baseline_from_audit(document, "audit.json")
    # A person replaces each TODO before the gate takes the file (it refuses a TODO).
    reasoned = text.replace("TODO say why this is accepted", "known, fix due in May")
    written = baseline_from_mapping(yaml.safe_load(reasoned), catalogue, source="written")
    assert [(f.id, f.verdict) for f in written.findings] == [("MCA-REPLAY-001", Verdict.VULNERABLE)]
    assert [(e.id, e.layer) for e in written.layers] == [("MCA-FORGE-001", Layer.SDK_BOUNDARY)]
    assert all(written.mark(r) is None or written.mark(r).status == ACCEPTED for r in results)  # type: ignore[union-attr]
    assert "TODO say why this is accepted" in text
