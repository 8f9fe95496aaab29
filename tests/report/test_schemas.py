"""audit.json against the schema the package ships; audit.sarif against the official SARIF 2.1.0 schema."""

from __future__ import annotations

import json
from typing import Any

from mcp_confirm_audit.report import AuditReport
from mcp_confirm_audit.report.audit_json import AuditJson
from mcp_confirm_audit.report.sarif import Sarif

Check = Any


def test_audit_json_validates_with_and_without_a_baseline(
    report: AuditReport, plain_report: AuditReport, audit_errors: Check
) -> None:
    for each in (report, plain_report):
        assert audit_errors(json.loads(AuditJson().render(each))) == []


def test_the_audit_schema_is_not_vacuous(report: AuditReport, audit_errors: Check) -> None:
    document = json.loads(AuditJson().render(report))
    document["results"][0]["verdict"] = "probably-fine"
    del document["results"][1]["evidence"]
    document["results"][2]["surprise"] = True
    problems = audit_errors(document)
    assert any("probably-fine" in p for p in problems)
    assert any("'evidence' is a required property" in p for p in problems)
    assert any("surprise" in p for p in problems)


def test_sarif_validates_against_the_official_schema(
    report: AuditReport, plain_report: AuditReport, sarif_errors: Check
) -> None:
    for each in (report, plain_report):
        assert sarif_errors(json.loads(Sarif().render(each))) == []


def test_the_official_sarif_schema_rejects_what_it_should(report: AuditReport, sarif_errors: Check) -> None:
    document = json.loads(Sarif().render(report))
    document["runs"][0]["results"][0]["level"] = "fatal"
    document["runs"][0]["results"][0]["baselineState"] = "forgotten"
    assert len(sarif_errors(document)) >= 2


def test_sarif_has_one_rule_per_attack_and_one_result_per_finding(report: AuditReport) -> None:
    run = json.loads(Sarif().render(report))["runs"][0]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert rule_ids == [*sorted({r.id for r in report.results}), "control-decline"]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    # The vulnerable finding is accepted by the baseline: suppressed, with the reason.
    replay = by_rule["MCA-REPLAY-001"]
    assert replay["level"] == "error"
    assert replay["baselineState"] == "unchanged"
    assert replay["suppressions"] == [
        {"kind": "external", "status": "accepted", "justification": "fixed upstream in 2.0; tracked as #12"}
    ]
    assert by_rule["MCA-CONSENT-004"]["level"] == "warning"
    assert by_rule["MCA-CONSENT-004"]["baselineState"] == "new"
    # A baselined finding that is gone: a pass whose baseline state is absent.
    assert by_rule["MCA-FORGE-001"]["kind"] == "pass"
    assert by_rule["MCA-FORGE-001"]["baselineState"] == "absent"
    assert by_rule["control-decline"]["level"] == "error"
    assert "MCA-ROOT-003" not in by_rule
    assert "MCA-FORGE-020" not in by_rule
    for result in run["results"]:
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
    # Could not be judged: the run is not successful, and says why.
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    assert "MCA-XTARGET-004" in invocation["toolExecutionNotifications"][0]["message"]["text"]
