"""review.md: what a reviewer needs to act on each finding, and what could not be tested."""

from __future__ import annotations

import sys
from dataclasses import replace

from mcp_confirm_audit.models import Effect, Verdict
from mcp_confirm_audit.report import AuditReport
from mcp_confirm_audit.report.document import refused_by
from mcp_confirm_audit.report.review_md import _SPACES, ReviewMarkdown, _cell


def _section(text: str, title: str) -> str:
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def test_every_finding_has_its_requirement_evidence_and_a_command_that_reruns_it(report: AuditReport) -> None:
    findings = _section(ReviewMarkdown().render(report), "Findings")
    for result in report.findings:
        block = findings[findings.index(f"#### {result.id}") :]
        block = block[: block.find("\n#### ", 1) if "\n#### " in block[1:] else None]
        assert (
            f"**Requirement** ({result.level}, binding the server): `{result.refs[0]}`; {result.refs[1]}"
            in block
        )
        assert f"- **Remedy**: {result.remedy}" in block
        assert "- **OWASP**: MCP07 Insufficient Authentication & Authorization" in block
        assert all(line in block for line in result.evidence)  # the exact request sequence
        assert f"--mcp-seed=1234 -k '{result.id} and {result.tool}'" in block
        assert "mcp-confirm-audit run --profile targets/example.yaml -- " in block
    assert "### Control decline failed on `delete_file`" in findings
    assert "-k 'control-decline and delete_file'" in findings


def test_findings_are_ordered_by_severity_and_a_weak_one_is_never_filed_high(report: AuditReport) -> None:
    findings = _section(ReviewMarkdown().render(report), "Findings")
    assert findings.index("### Critical") < findings.index("MCA-REPLAY-001") < findings.index("### Low")
    # MCA-CONSENT-004 is a weak SHOULD of a family rated medium: filed under Low.
    assert findings.index("### Low") < findings.index("#### MCA-CONSENT-004")
    assert "### Medium" not in findings


def test_the_layer_table_has_one_row_per_result_with_the_refusing_layer(report: AuditReport) -> None:
    table = _section(ReviewMarkdown().render(report), "Which layer refused each attack")
    rows = [line for line in table.splitlines() if line.startswith("| MCA-")]
    assert len(rows) == len(report.results)
    assert "| MCA-FORGE-001 | random-token | `delete_file` | refused | sdk-boundary | no | stale |" in rows
    assert (
        "| MCA-REPLAY-001 | after-success | `delete_file` | vulnerable | none (it took effect) | no | accepted |"
        in rows
    )


def test_what_could_not_be_tested_is_listed_with_the_reason(report: AuditReport) -> None:
    untested = _section(ReviewMarkdown().render(report), "Not testable here, and why")
    for result in report.results:
        if result.verdict in (Verdict.NOT_APPLICABLE, Verdict.INCONCLUSIVE):
            assert (
                f"| {result.id} | `{result.tool}` | {result.verdict.value} | `{result.reason}` |" in untested
            )
    assert "`the form has no field that can say no`" in untested


def test_the_requirement_of_every_family_is_quoted(report: AuditReport) -> None:
    requirements = _section(ReviewMarkdown().render(report), "The requirement each result rests on")
    for result in report.results:
        assert result.id in requirements
        assert all(ref in requirements for ref in result.refs)


def test_stale_entries_and_layer_drift_are_named_in_the_baseline_section(report: AuditReport) -> None:
    baseline = _section(ReviewMarkdown().render(report), "Baseline")
    assert "MCA-FORGE-001 on `delete_file`: stale" in baseline
    assert "MCA-ROOT-003 on `delete_file`: layer-drift: refused by tool, not by protocol" in baseline
    assert "MCA-REPLAY-003 on delete_file: the attack is retired" in baseline


def test_results_through_more_than_one_way_of_confirming_are_grouped_by_it(report: AuditReport) -> None:
    from dataclasses import replace

    token = [replace(r, mechanism="token", tool="send_payment") for r in report.results[:2]]
    mixed = replace(report, results=(*report.results, *token))
    table = _section(ReviewMarkdown().render(mixed), "Which layer refused each attack")
    assert "### Confirmed through MRTR input requests" in table
    assert table.index("### Confirmed through a token from a preview call") > table.index(
        "### Confirmed through MRTR"
    )
    # One way of confirming: one table, no headings (the checked-in review reads as before).
    single = _section(ReviewMarkdown().render(report), "Which layer refused each attack")
    assert "### Confirmed through" not in single


def test_the_tools_zero_configuration_left_out_are_named_with_why(report: AuditReport) -> None:
    from dataclasses import replace

    left_out = [
        "approve: a step of move_joint's pending flow",
        "reset_<b>all</b>: did not ask, and showed no effect",
    ]
    text = ReviewMarkdown().render(replace(report, target={**report.target, "left_out": left_out}))
    row = next(line for line in text.splitlines() if line.startswith("| Not audited"))
    # Each in a code span: a tool's name is the target's string, never rendered.
    assert "`approve: a step of move_joint's pending flow`" in row
    assert "`reset_<b>all</b>: did not ask, and showed no effect`" in row
    assert "Not audited" not in ReviewMarkdown().render(report)


def test_a_question_forged_for_the_person_is_refused_by_nothing_though_nothing_changed(
    report: AuditReport,
) -> None:
    # prompt-forging's finding is what the person read: saying "it took effect" would send a reviewer
    # looking for a deleted file that is still there.
    taken = next(r for r in report.results if r.verdict is Verdict.VULNERABLE)
    forged = replace(taken, id="MCA-PROMPT-004", effect=Effect(), reason="escape from the name reached it")
    table = _section(ReviewMarkdown().render(replace(report, results=(forged, taken))), "Which layer refused")
    assert "| MCA-PROMPT-004 |" in table
    assert "| vulnerable | none (nothing refused it) |" in table
    assert "| vulnerable | none (it took effect) |" in table
    assert refused_by(forged) == "none (nothing refused it)"
    assert refused_by(taken) == "none (it took effect)"


def test_a_cell_is_stripped_as_str_strip_strips_whatever_the_space() -> None:
    # _cell skips str.strip() when neither end is in _SPACES: it must be every space there is.
    assert {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()} == _SPACES
    for text in ["\u3000x\xa0", " a|b\nc ", "", "   ", "`x`", 7, "\x85"]:
        assert _cell(text) == (str(text).replace("|", "\\|").replace("\n", " ").strip() or "-")
