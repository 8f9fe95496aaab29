"""Careful servers written in other styles: no finding on any of them, and their flaws still caught.

The same careful reference server, written the way other authors write it
(`--style`, see targets/reference/styles/): a markdown escaper that backslashes
every CommonMark punctuation character and shows hidden characters as
`<U+200B>`; a name quoted in a code span; single-use tickets of its own with
refusal texts unlike ours. A verdict that depends on how our own server happens
to say things shows up here as a `vulnerable` or `weak` on a server that is fine.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from test_detection_matrix import V_OR_W, assert_caught_and_nothing_else

from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.session import AuditRun

AuditFn = Callable[..., AuditRun]
V, W = Verdict.VULNERABLE, Verdict.WEAK

STYLES = ("markdown-escaped", "code-span", "own-ledger")


@pytest.mark.parametrize("style", STYLES)
def test_a_careful_server_in_another_style_gets_no_finding_over_the_whole_catalogue(
    audit_reference: AuditFn, style: str
) -> None:
    run = audit_reference("--style", style, "--second-tool")
    assert all(c.passed for c in run.controls), run.controls
    found = [(r.id, r.verdict, r.reason) for r in run.results if r.verdict in (V, W)]
    assert found == []
    # Judged, not skipped: only what this run does not configure goes unjudged.
    judged = {r.verdict for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE}
    assert judged == {Verdict.REFUSED}, [(r.id, r.verdict, r.reason) for r in run.results]


# style -> (its flaw, the families it may fool, the attacks that must catch it, and how)
FLAWED: dict[str, tuple[str, str | tuple[str, ...], dict[str, Verdict | frozenset[Verdict]]]] = {
    "markdown-escaped": (
        "sanitiser-keeps-bidi",
        "prompt-forging",
        {"MCA-PROMPT-002": V, "MCA-PROMPT-003": V},
    ),
    "code-span": (
        "unsanitised-question",
        "prompt-forging",
        {f"MCA-PROMPT-{n:03d}": V for n in range(1, 7)},
    ),
    "own-ledger": (
        "no-ledger",
        ("replay", "double-spend"),
        {"MCA-REPLAY-001": V, "MCA-REPLAY-002": V, "MCA-REPLAY-003": V, "MCA-DSPEND-001": V_OR_W},
    ),
}


@pytest.mark.parametrize("style", sorted(FLAWED))
def test_a_flaw_in_another_style_is_still_caught_and_fools_no_other_family(
    audit_reference: AuditFn, style: str
) -> None:
    flaw, families, expected = FLAWED[style]
    run = audit_reference("--style", style, "--flaw", flaw)
    assert_caught_and_nothing_else(run, families, expected)


@pytest.mark.parametrize("style", ["quoted", "markdown-escaped"])
def test_a_sanitiser_that_lets_hangul_fillers_and_variation_selectors_through_is_caught_by_code_point(
    audit_reference: AuditFn, style: str
) -> None:
    # It escapes every control, format and separator character: only letters and
    # marks that render as nothing get through.
    run = audit_reference("--style", style, "--flaw", "sanitiser-category-only", families=("prompt-forging",))
    by_id = run.by_id()
    invisible = by_id["MCA-PROMPT-003"]
    assert invisible.verdict is V, invisible.evidence
    assert (
        "invisible character U+3164 from the name reached the question" in invisible.reason
    )  # HANGUL FILLER
    assert "invisible character U+FE0F from the name reached the question" in invisible.reason  # VS16
    assert [r.id for r in run.results if r.verdict in (V, W)] == ["MCA-PROMPT-003"]


@pytest.mark.parametrize("style", ["own-ledger", "code-span"])
def test_a_decline_worded_unlike_the_replay_refusal_leaves_the_race_refused(
    audit_reference: AuditFn, style: str
) -> None:
    # Both say no to a decline with an error of their own ("Request declined by
    # operator.", "not confirmed (decline)..."), unlike what a replay is told.
    run = audit_reference("--style", style, families=("double-spend",))
    race = run.by_id()["MCA-DSPEND-002"]
    assert race.verdict is Verdict.REFUSED, (race.reason, race.evidence)
