"""Only a refusal control that failed is a finding: a search that gave up acted on nothing (trial 13, item 1).

Zero configuration's search for the arguments a tool wants fails when it gives up. That failure, like a
failed approve, leaves the tool's attacks unjudged; it must never read as "a search acted" in review.md,
be counted as a failed refusal control in audit.json, or be a SARIF error. A decline that acted still is,
in every writer.
"""

from __future__ import annotations

import json
from typing import Any

from conftest import GENERATED, TARGET, result

from mcp_confirm_audit.engine.baseline import CONTROLS
from mcp_confirm_audit.engine.gate import SKIPPED, control_gate
from mcp_confirm_audit.models import REFUSAL_CONTROLS, SEARCH, UNASKED, ControlResult, Verdict
from mcp_confirm_audit.report import AuditReport, build_report
from mcp_confirm_audit.report.audit_json import AuditJson
from mcp_confirm_audit.report.fleet import TargetOutcome
from mcp_confirm_audit.report.review_md import ReviewMarkdown
from mcp_confirm_audit.report.sarif import Sarif
from mcp_confirm_audit.report.terminal import summary

TOOL = "delete_file"
# What the approve control and the search said on mcp-changeset's notes server (trial 13).
NOT_ASKED = ControlResult(
    TOOL,
    "approve",
    False,
    True,
    "did not ask (tool-error: Error executing tool: unknown change 'mcp-confirm-audit')",
)
GAVE_UP = ControlResult(
    TOOL,
    SEARCH,
    False,
    True,
    "honest-flow search (at most 12 calls of the tool): gave up: delete_file's refusal names no rule "
    "the harness can follow | delete_file({'change_id': 'mcp-confirm-audit'}) -> unknown change",
)
DECLINE_ACTED = ControlResult(
    TOOL, "decline", False, True, "the action took effect after a decline: root/victim.txt"
)
# A decline whose setup the target refused, in a fresh world too: it never said no to anything.
NOT_BEGUN = ControlResult.not_begun(
    TOOL, "decline", "setup call 1 (plant_bed) did not succeed (tool-error: no seed left for 'tomato')"
)
UNJUDGED = result(
    "MCA-REPLAY-001", Verdict.INCONCLUSIVE, None, reason=f"honest flow failed: {NOT_ASKED.detail}"
)


def _report(*controls: ControlResult) -> AuditReport:
    return build_report((UNJUDGED,), controls, TARGET, generated=GENERATED)


def _sarif(report: AuditReport) -> dict[str, Any]:
    run: dict[str, Any] = json.loads(Sarif().render(report))["runs"][0]
    return run


def test_a_search_that_gave_up_is_no_finding_in_any_report() -> None:
    report = _report(NOT_ASKED, GAVE_UP)
    assert report.failed_controls == ()
    review = ReviewMarkdown().render(report)
    assert "0 failed refusal control(s)" in review
    assert "**0 finding(s)**" in review
    assert "a search acted" not in review
    assert "A search must never act" not in review
    assert "### Control search failed" not in review
    # Said for what it is: the tool was not audited, and why.
    assert "not audited: the honest flow failed" in review
    assert f"Zero configuration's search for the arguments the tool wants gave up on `{TOOL}`" in review
    assert json.loads(AuditJson().render(report))["summary"]["failed_refusal_controls"] == 0
    run = _sarif(report)
    assert [r["ruleId"] for r in run["results"]] == ["control-approve"]  # the open "not audited" result
    assert run["results"][0]["kind"] == "open"
    assert "control-search" not in [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    terminal = summary(report, ())
    assert terminal[0].startswith("judged: not audited: the honest flow failed")


def test_a_decline_that_acted_is_a_finding_in_every_report_beside_a_search_that_gave_up() -> None:
    report = _report(NOT_ASKED, DECLINE_ACTED, GAVE_UP)
    assert report.failed_controls == (DECLINE_ACTED,)
    review = ReviewMarkdown().render(report)
    assert "1 failed refusal control(s)" in review
    assert f"### Control decline failed on `{TOOL}`" in review
    assert f"a decline acted on `{TOOL}`" in review
    assert "### Control search failed" not in review
    assert json.loads(AuditJson().render(report))["summary"]["failed_refusal_controls"] == 1
    run = _sarif(report)
    failed = [r for r in run["results"] if r["kind"] == "fail"]
    assert [(r["ruleId"], r["level"]) for r in failed] == [("control-decline", "error")]


def test_the_fleet_counts_a_failed_refusal_control_and_not_a_search_that_gave_up() -> None:
    def outcome(*controls: ControlResult) -> TargetOutcome:
        return TargetOutcome("t", audit=json.loads(AuditJson().render(_report(*controls))))

    assert outcome(NOT_ASKED, GAVE_UP).findings == 0
    assert outcome(NOT_ASKED, DECLINE_ACTED, GAVE_UP).findings == 1


def test_which_controls_are_findings_when_they_fail() -> None:
    # Each control a baseline may accept as failing is a refusal control, and so is acting unasked.
    assert {*CONTROLS, UNASKED} <= REFUSAL_CONTROLS
    assert "approve" not in REFUSAL_CONTROLS
    assert SEARCH not in REFUSAL_CONTROLS
    assert DECLINE_ACTED.finding
    assert not GAVE_UP.finding
    assert not NOT_ASKED.finding
    # A refusal control that could not be run (nothing waited to be asked about) is none either.
    assert not ControlResult(TOOL, "cancel", True, False, "could not be run").finding


def test_a_refusal_control_that_could_not_begin_is_no_finding_in_any_report_and_says_why() -> None:
    approved = ControlResult(TOOL, "approve", True, True, "asked, accepted, acted")
    report = _report(approved, NOT_BEGUN)
    assert not NOT_BEGUN.finding
    assert report.failed_controls == ()
    review = ReviewMarkdown().render(report)
    assert "**0 finding(s)**" in review
    assert "0 failed refusal control(s)" in review
    assert "### Control decline failed" not in review
    assert (
        "| control decline | `delete_file` | not applicable | `could not begin, so it proved nothing: setup call 1"
        in review
    )
    assert json.loads(AuditJson().render(report))["summary"]["failed_refusal_controls"] == 0
    run = _sarif(report)
    assert "control-decline" not in [rule["id"].split("/")[0] for rule in run["tool"]["driver"]["rules"]]
    assert not [r for r in run["results"] if r["kind"] == "fail"], run["results"]
    # What it leaves untested is said all the same: a note (the attack left unjudged is the error).
    (invocation,) = run["invocations"]
    said = invocation["toolExecutionNotifications"]
    assert [n for n in said if n["level"] != "error"] == [
        {"level": "note", "message": {"text": f"control decline on delete_file {NOT_BEGUN.detail}"}}
    ], said
    # Alone, it leaves the run successful: a note is not a failure of the run.
    alone = _sarif(build_report((), (approved, NOT_BEGUN), TARGET, generated=GENERATED))["invocations"][0]
    assert alone["executionSuccessful"] is True
    assert [n["level"] for n in alone["toolExecutionNotifications"]] == ["note"]
    audit = json.loads(AuditJson().render(report))
    assert TargetOutcome("t", audit=audit).findings == 0
    # Its pytest item is skipped with the reason, never failed: it adds nothing to the exit status.
    gate = control_gate(NOT_BEGUN, "decline")
    assert (gate.outcome, gate.said) == (SKIPPED, NOT_BEGUN.detail)


# toolpermit 0.1.1's proxy (trial 15): a call nobody approves polls its approval, which only a listing by
# the person ever expires, so the call never ends. It never acted; the report said "a unanswered acted".
STILL_WAITING = ControlResult(
    TOOL,
    "unanswered",
    False,
    True,
    "did not fail closed within its bound (27s: its declared answer_deadline of 12s, then a round trip) "
    "while nobody answered: no answer within 27s; a flow the person never completes must end with a "
    "refusal, not wait past its bound",
)
ACTED_UNANSWERED = ControlResult(
    TOOL, "unanswered", False, True, "acted though the person never answered: root/victim.txt removed"
)


def test_a_call_nobody_answered_that_never_ended_is_a_finding_that_says_nothing_acted() -> None:
    report = _report(STILL_WAITING)
    assert report.failed_controls == (STILL_WAITING,)
    review = ReviewMarkdown().render(report)
    assert "1 failed refusal control(s)" in review
    assert f"### Control unanswered failed on `{TOOL}`" in review
    assert f"a call to `{TOOL}` nobody answered was still waiting past its bound, and nothing acted" in review
    assert "Nothing acted, but a call nobody answers must end with a refusal within its bound." in review
    assert "give the wait a lifetime that the waiting call enforces itself" in review
    for false in ("a unanswered acted", "A unanswered must never act", "must leave the file alone", "(high)"):
        assert false not in review, false
    rule = next(r for r in _sarif(report)["tool"]["driver"]["rules"] if r["id"] == "control-unanswered")
    assert "never act" in rule["shortDescription"]["text"]
    assert "decline" not in rule["help"]["text"]


def test_a_call_nobody_answered_that_acted_is_still_reported_as_acting() -> None:
    report = _report(ACTED_UNANSWERED)
    assert not ACTED_UNANSWERED.still_waiting
    review = ReviewMarkdown().render(report)
    assert f"1. **control unanswered** (high): an unanswered acted on `{TOOL}`" in review
    assert "An unanswered must never act." in review
    assert "nothing acted" not in review
