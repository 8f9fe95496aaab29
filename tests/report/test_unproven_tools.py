"""A tool whose honest flow failed, as the reports show it (trial 14, items 9, 11 and 13).

Zero configuration on a server with several tools can fail on all of them. The headline is read
first: three tools' whole details pasted together (1,822 characters on host-terminal-mcp, its
stderr included) buried the one failure that mattered. A tool that never asked was still listed
"over 2025-11-25 (elicitation/create over the back channel)" and its attacks tabled under "Confirmed
through elicitation/create requests", facts nobody observed. And the advice around a refusal that
names an approver told the reader to fix the tool's arguments.
"""

from __future__ import annotations

from dataclasses import replace

from conftest import GENERATED, TARGET, result

from mcp_confirm_audit.models import ControlResult, Layer, Verdict
from mcp_confirm_audit.report import build_report
from mcp_confirm_audit.report.document import headline
from mcp_confirm_audit.report.review_md import ReviewMarkdown
from mcp_confirm_audit.report.sarif import Sarif

LONG_FAILURE = (
    "relative: did not ask (tool-error: Not a directory: {sandbox}/root/007-control-approve-relative/"
    "victim.txt); the target refused the harness's arguments: set path_arg (or args: with {path}) in the "
    "profile; absolute: did not ask (tool-error: Not a directory); value: did not ask (tool-error: Input "
    "validation error: 'path' is a required property)"
)
ASKED_ELSEWHERE = (
    "did not ask (tool-error: 'cancel_order' was refused by the approver.); the refusal names an approver"
)


def _unjudged(tool: str, era: str = "2025-11-25") -> object:
    return result(
        "MCA-REPLAY-001",
        Verdict.INCONCLUSIVE,
        None,
        tool=tool,
        era=era,
        mechanism="elicitation",
        reason="honest flow failed",
    )


def test_the_headline_gives_each_failed_tool_one_clause_and_points_to_its_control() -> None:
    controls = [
        ControlResult("change_directory", "approve", False, True, LONG_FAILURE),
        ControlResult("execute_command", "approve", False, True, ASKED_ELSEWHERE),
    ]
    report = build_report(
        (_unjudged("change_directory"), _unjudged("execute_command")),  # type: ignore[arg-type]
        controls,
        {**TARGET, "tools": ["change_directory", "execute_command"]},
        generated=GENERATED,
    )
    said = headline(report)
    assert said.startswith("not audited: the honest flow failed (change_directory: relative: did not ask")
    assert LONG_FAILURE not in said  # cut, and marked as cut
    assert f"change_directory: {LONG_FAILURE[:200].rstrip()}…; execute_command: {ASKED_ELSEWHERE}" in said
    assert "each whole under its approve control" in said
    review = ReviewMarkdown().render(report)
    assert LONG_FAILURE in review  # whole in the controls table
    # The way out is the control's own advice, not an answer: template nobody asked for.
    assert "`answer:` template" not in review
    assert "its control, under Controls, says what failed and what to give the profile" in review
    assert "answer: template" not in Sarif().render(report)


def test_a_short_failure_is_quoted_whole_and_not_said_to_be_cut() -> None:
    report = build_report(
        (_unjudged("execute_command"),),  # type: ignore[arg-type]
        [ControlResult("execute_command", "approve", False, True, ASKED_ELSEWHERE)],
        {**TARGET, "tools": ["execute_command"]},
        generated=GENERATED,
    )
    said = headline(report)
    assert f"(execute_command: {ASKED_ELSEWHERE})" in said
    assert "each whole" not in said


def test_a_tool_that_never_asked_is_not_said_to_confirm_through_any_mechanism() -> None:
    approved = ControlResult("delete_file", "approve", True, True, "asked, accepted, acted")
    failed = ControlResult("change_directory", "approve", False, True, LONG_FAILURE)
    judged = result("MCA-REPLAY-001", Verdict.REFUSED, Layer.TOOL, era="2026-07-28", mechanism="mrtr")
    report = build_report(
        (judged, _unjudged("change_directory")),  # type: ignore[arg-type]
        [approved, failed],
        {**TARGET, "tools": ["delete_file", "change_directory"]},
        generated=GENERATED,
    )
    review = ReviewMarkdown().render(report)
    assert "`delete_file` over 2026-07-28 (MRTR rounds)" in review
    assert "`change_directory` over 2025-11-25;" in review or review.count(
        "`change_directory` over 2025-11-25 |"
    )
    assert "change_directory` over 2025-11-25 (elicitation/create" not in review
    assert "### Confirmed through MRTR input requests" in review
    assert "### Not seen to confirm: the honest flow failed" in review
    assert "### Confirmed through elicitation/create" not in review


def test_a_tool_that_asked_over_a_legacy_connection_still_says_so() -> None:
    approved = ControlResult("delete_file", "approve", True, True, "asked, accepted, acted")
    judged = replace(_unjudged("delete_file"), verdict=Verdict.REFUSED, layer=Layer.TOOL)  # type: ignore[type-var]
    report = build_report((judged,), [approved], TARGET, generated=GENERATED)
    assert (
        "`delete_file` over 2025-11-25 (elicitation/create over the back channel)"
        in ReviewMarkdown().render(report)
    )


def test_a_tool_whose_person_answers_through_a_call_of_its_own_is_not_said_to_be_asked_over_mcp() -> None:
    # host-terminal-mcp over 2025-11-25: its pending flow's yes is approve_command, no elicitation/create.
    approved = ControlResult(
        "execute_command", "approve", True, True, "previewed, confirmed, acted through pending"
    )
    judged = result(
        "MCA-REPLAY-001",
        Verdict.REFUSED,
        Layer.TOOL,
        tool="execute_command",
        era="2025-11-25",
        mechanism="pending",
    )
    review = ReviewMarkdown().render(build_report((judged,), [approved], TARGET, generated=GENERATED))
    assert "`execute_command` over 2025-11-25" in review
    assert "`execute_command` over 2025-11-25 (elicitation/create" not in review
