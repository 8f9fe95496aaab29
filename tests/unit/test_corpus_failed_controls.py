"""A flawed case that names the controls its flaw fails (`fails_controls:` in targets/corpus/corpus.yaml).

A gate that acts when nobody answers is open: the approve control fails with the unanswered one,
every attack but the one that finds that is left inconclusive, and no baseline holds its run
green. The case says so; the corpus then counts that failure as its expectation, and still
fails the run when the control it names did not fail, or when anything else keeps it red.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_confirm_audit.cli import corpus
from mcp_confirm_audit.cli.corpus import Outcome, load_manifest, score

MANIFEST = Path(__file__).resolve().parents[2] / "targets" / "corpus" / "corpus.yaml"
OPEN = "elsewhere-terminal/fails-open"
FOUND = (("MCA-NOANSWER-001", "unanswered", "vulnerable"),)
APPROVE = "control approve on delete_file: error, acted though the person never answered: victim.txt"


def test_the_controls_a_case_expects_to_fail_are_its_expectation_and_not_a_miss() -> None:
    manifest = load_manifest(MANIFEST)
    outcome = Outcome(OPEN, FOUND, ("approve", "unanswered"), baselined=(APPROVE,))
    tallies, wrong = score(manifest, [outcome])
    assert wrong == []
    assert (tallies["unanswered"].detected, tallies["unanswered"].expected) == (1, 1)
    assert corpus.baseline_wrong(manifest, [outcome]) == []
    [row] = corpus.baseline_table(manifest, [outcome]).splitlines()[2:]
    assert f"| exits 1, as this case expects (fails_controls): {APPROVE} | not in the sample |" in row


def test_a_named_control_that_did_not_fail_and_any_other_red_line_still_fail_the_run() -> None:
    manifest = load_manifest(MANIFEST)
    # The harness could not complete the honest flow at all: approve failed, unanswered never ran.
    alone = Outcome(OPEN, FOUND, ("approve",), baselined=(APPROVE,))
    assert score(manifest, [alone])[1] == [
        f"{OPEN}: control unanswered did not fail, where this case's flaw must fail it"
    ]
    also = Outcome(
        OPEN, FOUND, ("approve", "unanswered"), baselined=(APPROVE, "MCA-NOANSWER-001 on x: error")
    )
    assert corpus.baseline_wrong(manifest, [also]) == [
        f"{OPEN}: under a baseline of its own findings the run exits 1: MCA-NOANSWER-001 on x: error"
    ]
    # An attack left inconclusive by that failed flow (another family, with --all-families) is that failure.
    inconclusive = "MCA-SELFAPPROVE-001 on delete_file: error, honest flow failed: acted though"
    assert (
        corpus.baseline_wrong(
            manifest, [Outcome(OPEN, FOUND, ("approve", "unanswered"), baselined=(APPROVE, inconclusive))]
        )
        == []
    )
    # Another case's failed approve control is never excused by this one's expectation.
    other = Outcome("elsewhere-terminal/asks-first", (), ("approve",))
    assert "control approve failed, so its attacks are inconclusive" in score(manifest, [other])[1][0]
    # The line says what the control said, escaped (a target's words are never printed live).
    said = Outcome("elsewhere-terminal/asks-first", (), ("approve",), failed_why=("no question\x1b[2J",))
    assert "control approve failed ('no question\\x1b[2J'), so" in score(manifest, [said])[1][0]


def test_a_case_its_own_gate_holds_red_is_never_run_again_for_real() -> None:
    terminal = [c for c in load_manifest(MANIFEST).cases if c.server == "elsewhere-terminal"]
    # Its server's first settled flawed case of another flaw is run instead.
    [sample] = corpus.default_sample(terminal)
    assert sample != OPEN
    assert sample.startswith("elsewhere-terminal/")


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ({"careful": True, "fails_controls": ["unanswered"]}, "is for a flawed case"),
        (
            {"expect": {"MCA-NOANSWER-001": ["vulnerable"]}, "fails_controls": ["approve"]},
            "names the control",
        ),
        ({"expect": {"MCA-NOANSWER-001": ["vulnerable"]}, "fails_controls": ["approval"]}, "approve"),
    ],
)
def test_fails_controls_is_checked_when_the_manifest_loads(case: dict[str, object], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        corpus.Case.model_validate({"id": "c", "server": "s", **case})


def test_an_audit_of_several_tools_counts_each_tools_result() -> None:
    # Zero configuration audits both of the arm's gated tools: a finding on the second is never hidden
    # behind the first's refusal, and an expected attack found on either is found.
    manifest = load_manifest(MANIFEST)
    careful = Outcome(
        "arm-token/zero-config/careful",
        (("MCA-UNGATED-001", "ungated", "weak"), ("MCA-UNGATED-001", "ungated", "refused")),
    )
    flawed = Outcome(
        "arm-token/ungated-second-tool",
        (("MCA-UNGATED-001", "ungated", "vulnerable"), ("MCA-UNGATED-001", "ungated", "refused")),
    )
    tallies, wrong = score(manifest, [careful, flawed])
    assert (tallies["ungated"].judged, tallies["ungated"].false_positives) == (2, 1)
    assert (tallies["ungated"].detected, tallies["ungated"].expected) == (1, 1)
    assert wrong == ["arm-token/zero-config/careful: MCA-UNGATED-001 is a false positive (weak)"]
