"""Careful servers written in other styles: no finding on any of them, and their flaws still caught.

The same careful reference server, written the way other authors write it
(`--style`, see targets/reference/styles/): a markdown escaper that backslashes
every CommonMark punctuation character and shows hidden characters as
`<U+200B>`; a name quoted in a code span; single-use tickets of its own with
refusal texts unlike ours; a path refused before asking in words that name no
concern ("'.' is not a regular file"), judged refused because its benign twin
was asked about. A verdict that depends on how our own server happens
to say things shows up here as a `vulnerable` or `weak` on a server that is fine.

Each server is built in the audit's own process (`in_process`, test_detection_matrix.py): a style
is the words and the checks of the server's code, which the same real SDK carries alike over every
transport (test_transports.py); the corpus audits each style, careful and with its flaw, over stdio.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest
from baselined import assert_green_as_it_is, assert_green_with_its_findings_baselined
from conftest import Shared
from test_detection_matrix import V_OR_W, assert_caught_and_nothing_else, in_process

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun
from mcp_confirm_audit.models import Layer, Verdict

AuditFn = Callable[..., AuditRun]
V, W = Verdict.VULNERABLE, Verdict.WEAK

STYLES = ("markdown-escaped", "code-span", "own-ledger", "terse")


@pytest.fixture(scope="module")
def careful_in(audit_reference: AuditFn, across_workers: Shared[AuditRun]) -> Callable[[str], AuditRun]:
    """The careful server in a style over the whole catalogue, once (per run) for every test that reads it."""

    @cache
    def run(style: str) -> AuditRun:
        return across_workers(
            f"careful-style-{style}",
            lambda: audit_reference(**in_process(["--style", style, "--second-tool"])),
        )

    return run


@pytest.mark.parametrize("style", STYLES)
def test_a_careful_server_in_another_style_gets_no_finding_over_the_whole_catalogue(
    careful_in: Callable[[str], AuditRun], style: str
) -> None:
    run = careful_in(style)
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
    # Every input attack was sent after its benign twin, which was asked about.
    for result in run.results:
        if result.family == "out-of-root":
            assert any(line.startswith("[setup] benign twin") for line in result.evidence), result.evidence
    assert_green_as_it_is(run)


def test_a_terse_refusal_of_the_root_itself_is_the_tools_because_its_benign_twin_was_asked_about(
    careful_in: Callable[[str], AuditRun],
) -> None:
    # out-of-root's results in the terse style's whole-catalogue audit (the test above).
    run = careful_in("terse")
    out_of_root = [r for r in run.results if r.family == "out-of-root"]
    assert out_of_root
    root = run.by_id()["MCA-ROOT-005"]
    assert (root.verdict, root.layer) == (Verdict.REFUSED, Layer.TOOL), root.evidence
    assert "'.' is not a regular file" in root.reason
    assert "while its benign twin" in root.reason
    assert "was asked about" in root.reason
    assert {r.verdict for r in out_of_root} == {Verdict.REFUSED}, [(r.id, r.reason) for r in out_of_root]


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
    # Refusing everything in the same few words hides no flaw: a path out is still seen going.
    "terse": (
        "no-containment",
        "out-of-root",
        {"MCA-ROOT-001": V, "MCA-ROOT-002": V, "MCA-ROOT-008": V},
    ),
    "own-ledger": (
        "no-ledger",
        ("replay", "double-spend"),
        {"MCA-REPLAY-001": V, "MCA-REPLAY-002": V, "MCA-REPLAY-003": V, "MCA-DSPEND-001": V_OR_W},
    ),
}


@pytest.mark.parametrize("style", sorted(FLAWED))
def test_a_flaw_in_another_style_is_still_caught_and_fools_no_other_family(
    audit_reference: AuditFn, catalogue: Catalogue, style: str
) -> None:
    # The families the flaw may fool: each flaw is the default style's flaw of the same name, whose
    # "fools no other family" the detection matrix proves over the whole catalogue, and each style is
    # audited whole careful above (the corpus audits each style with its flaw whole, over stdio).
    flaw, families, expected = FLAWED[style]
    may_fool = (families,) if isinstance(families, str) else families
    run = audit_reference(**in_process(["--style", style, "--flaw", flaw]), families=may_fool)
    assert_caught_and_nothing_else(run, families, expected)
    # The same run, gated by a baseline of its own findings, is green.
    assert_green_with_its_findings_baselined(run, catalogue)


def test_a_sanitiser_that_lets_hangul_fillers_and_variation_selectors_through_is_caught_by_code_point(
    audit_reference: AuditFn,
) -> None:
    # It escapes every control, format and separator character as <U+XXXX>: only
    # letters and marks that render as nothing get through. (The same flaw in the
    # default style is in the detection matrix.)
    flawed = ("--style", "markdown-escaped", "--flaw", "sanitiser-category-only")
    run = audit_reference(**in_process(flawed), families=("prompt-forging",))
    by_id = run.by_id()
    invisible = by_id["MCA-PROMPT-003"]
    assert invisible.verdict is V, invisible.evidence
    for code_point in ("U+3164", "U+FE0F"):  # HANGUL FILLER, VARIATION SELECTOR-16
        assert f"invisible character {code_point} from the name reached the question" in invisible.reason
    assert [r.id for r in run.results if r.verdict in (V, W)] == ["MCA-PROMPT-003"]
