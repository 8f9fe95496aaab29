"""audit.json against the schema the package ships; audit.sarif against the official SARIF 2.1.0 schema."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.report import AuditReport
from mcp_confirm_audit.report.audit_json import AuditJson
from mcp_confirm_audit.report.sarif import Sarif, anchor

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
    # Every control that ran has its rule (approve, and the refusals that applied), found or not.
    assert rule_ids == [
        *sorted({r.id for r in report.results}),
        "control-approve",
        "control-cancel",
        "control-decline",
    ]
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


def test_every_sarif_result_is_what_code_scanning_reads(report: AuditReport) -> None:
    # GitHub rejects a whole file in which one result lacks a physical location.
    run = json.loads(Sarif().render(report))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert run["results"]
    for result in run["results"]:
        (location,) = result["locations"]
        assert location["physicalLocation"]["artifactLocation"]["uri"] == "targets/example.yaml"
        assert set(result["partialFingerprints"]) == {"mcpConfirmAudit/v1"}
    for rule in rules:
        assert 0.0 <= float(rule["properties"]["security-severity"]) <= 10.0, rule["id"]
    replay = next(rule for rule in rules if rule["id"] == "MCA-REPLAY-001")
    assert "external/cwe/cwe-294" in replay["properties"]["tags"]
    assert {"AISVS-10.4.10", "ADA-AITS-2.3", "OWASP-MCP07"} <= set(replay["properties"]["tags"])
    related = {(r["target"]["id"], r["target"]["toolComponent"]["name"]) for r in replay["relationships"]}
    assert related == {
        ("MCP07", "OWASP MCP Top 10"),
        ("AISVS-10.4.10", "OWASP AISVS"),
        ("ADA-AITS-2.3", "ADA AI Tool Specification"),
    }
    taxa = {t["name"]: {x["id"] for x in t["taxa"]} for t in run["taxonomies"]}
    assert {"ADA-AITS-2.3", "ADA-AITS-2.7"} <= taxa["ADA AI Tool Specification"]


def test_the_fingerprints_are_stable_from_one_run_to_the_next(report: AuditReport) -> None:
    again = replace(report, generated=report.generated.replace(year=2031))
    prints = [
        [r["partialFingerprints"] for r in json.loads(Sarif().render(r))["runs"][0]["results"]]
        for r in (report, again)
    ]
    assert prints[0] == prints[1]


def test_a_clean_run_still_lists_every_rule_so_fixed_alerts_close(
    report: AuditReport, sarif_errors: Check
) -> None:
    clean = replace(
        report,
        results=tuple(replace(r, verdict=Verdict.REFUSED) for r in report.results),
        controls=tuple(replace(c, passed=True) for c in report.controls),
        marks={},
        baseline=None,
    )
    document = json.loads(Sarif().render(clean))
    run = document["runs"][0]
    assert run["results"] == []
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} >= {r.id for r in report.results}
    assert sarif_errors(document) == []


@pytest.mark.parametrize(
    ("target", "uri"),
    [
        ({"profile": "ci/server.yaml", "command": "x --root {root}"}, "ci/server.yaml"),
        ({"command": "python src/server.py --root {root}"}, "src/server.py"),
        ({"command": "py:app/server.py:build_server"}, "app/server.py"),
        ({"command": "http://127.0.0.1:8000/mcp"}, "README.md"),
        ({"command": "mcp-confirm --root {root}"}, "README.md"),
    ],
)
def test_a_result_is_anchored_to_the_profile_else_the_script_else_the_readme(
    target: dict[str, str], uri: str
) -> None:
    assert anchor(target) == uri
