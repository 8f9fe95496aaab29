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

from mcp_confirm_audit.engine.session import AuditRun
from mcp_confirm_audit.models import Verdict

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
    # code-span and own-ledger refuse a decline with an error worded unlike what a replay
    # is told ("Request declined by operator." against "That confirmation has been
    # consumed."): the decline's own reply is not a losing accept stopped by another guard.
    race = run.by_id()["MCA-DSPEND-002"]
    assert race.verdict is Verdict.REFUSED, (race.reason, race.evidence)


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


def test_a_sanitiser_that_lets_hangul_fillers_and_variation_selectors_through_is_caught_by_code_point(
    audit_reference: AuditFn,
) -> None:
    # It escapes every control, format and separator character as <U+XXXX>: only
    # letters and marks that render as nothing get through. (The same flaw in the
    # default style is in the detection matrix.)
    flawed = ("--style", "markdown-escaped", "--flaw", "sanitiser-category-only")
    run = audit_reference(*flawed, families=("prompt-forging",))
    by_id = run.by_id()
    invisible = by_id["MCA-PROMPT-003"]
    assert invisible.verdict is V, invisible.evidence
    for code_point in ("U+3164", "U+FE0F"):  # HANGUL FILLER, VARIATION SELECTOR-16
        assert f"invisible character {code_point} from the name reached the question" in invisible.reason
    assert [r.id for r in run.results if r.verdict in (V, W)] == ["MCA-PROMPT-003"]
