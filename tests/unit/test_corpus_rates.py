"""The corpus manifest and the rates computed from it (`mcp-confirm-audit corpus`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_confirm_audit.cli import corpus
from mcp_confirm_audit.cli.corpus import Outcome, load_manifest, score, wilson

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "targets" / "corpus" / "corpus.yaml"


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        # Values from the closed form, as tabulated by Newcombe (1998) and statsmodels' proportion_confint.
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (1, 1, 0.2065, 1.0),
        (5, 10, 0.2366, 0.7634),
        (81, 263, 0.2553, 0.3662),
    ],
)
def test_the_wilson_interval_matches_its_closed_form(
    successes: int, trials: int, low: float, high: float
) -> None:
    got = wilson(successes, trials)
    assert got == (pytest.approx(low, abs=1e-4), pytest.approx(high, abs=1e-4))


def test_no_trials_leaves_the_whole_interval() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def test_the_shipped_manifest_loads_and_every_case_is_flawed_or_careful() -> None:
    manifest = load_manifest(MANIFEST)
    assert any(c.careful for c in manifest.cases)
    assert all(c.expect for c in manifest.cases if not c.careful)
    # Careful twins in more than one style and on more than one channel.
    assert len({c.server for c in manifest.cases if c.careful}) >= 3


def test_a_miss_a_false_positive_and_an_unjudged_result_are_counted_as_such() -> None:
    manifest = load_manifest(MANIFEST)
    flawed = next(c for c in manifest.cases if c.id == "reference/any-answer-key")
    careful = next(c for c in manifest.cases if c.id == "reference/careful")
    outcomes = [
        # On the flawed case: its attack missed, another of its family found (its flaw's, not counted),
        # one of another family found (a false positive: the flaw fooled a family it should not).
        Outcome(
            flawed.id,
            (
                ("MCA-CONSENT-008", "consent", "refused"),
                ("MCA-CONSENT-001", "consent", "weak"),
                ("MCA-REPLAY-001", "replay", "vulnerable"),
            ),
        ),
        Outcome(
            careful.id,
            (
                ("MCA-REPLAY-001", "replay", "refused"),
                ("MCA-REPLAY-002", "replay", "inconclusive"),
                ("MCA-CONSENT-001", "consent", "weak"),
            ),
        ),
    ]
    tallies, wrong = score(manifest, outcomes)
    assert (tallies["consent"].detected, tallies["consent"].expected) == (0, 1)
    assert (tallies["consent"].false_positives, tallies["consent"].judged) == (1, 1)
    assert (tallies["replay"].false_positives, tallies["replay"].judged) == (1, 2)
    assert wrong == [
        "reference/any-answer-key: MCA-CONSENT-008 missed (refused, wanted vulnerable)",
        "reference/any-answer-key: MCA-REPLAY-001 is a false positive (vulnerable)",
        "reference/careful: MCA-CONSENT-001 is a false positive (weak)",
    ]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("servers: {}\ncases: [{id: a, server: nowhere, careful: true}]\n", "no server 'nowhere'"),
        ("servers: {s: {command: x}}\ncases: [{id: a, server: s}]\n", "careful: true or has expect:"),
        (
            "servers: {s: {command: x}}\ncases: [{id: a, server: s, expect: {MCA-X-001: [refused]}}]\n",
            "must expect vulnerable and/or weak",
        ),
    ],
)
def test_a_bad_manifest_is_one_line_naming_the_case(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "corpus.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=said):
        corpus.load_manifest(path)


def test_an_inconclusive_input_attack_on_a_careful_case_fails_and_another_inconclusive_is_counted() -> None:
    manifest = load_manifest(MANIFEST)
    outcomes = [
        Outcome(
            "reference/careful",
            (
                # out-of-root's hostile part is an input value, sent beside its benign twin.
                ("MCA-ROOT-001", "out-of-root", "inconclusive"),
                ("MCA-ROOT-002", "out-of-root", "refused"),
                ("MCA-REPLAY-002", "replay", "inconclusive"),
            ),
        ),
        # A flawed case's inconclusive results are its matrix's business, not this count's.
        Outcome("reference/any-answer-key", (("MCA-ROOT-001", "out-of-root", "inconclusive"),)),
    ]
    tallies, wrong = corpus.careful_score(manifest, outcomes)
    root, replay = tallies["out-of-root"], tallies["replay"]
    assert (root.judged, root.found, root.input_inconclusive, root.other_inconclusive) == (1, 0, 1, 0)
    assert (replay.judged, replay.input_inconclusive, replay.other_inconclusive) == (0, 0, 1)
    assert wrong == ["reference/careful: MCA-ROOT-001 (an input attack) is inconclusive on a careful case"]
    assert "| **overall** | 1 | 0 | 1 | 1 |" in corpus.careful_table(tallies)


def test_a_flawed_case_that_would_not_exit_0_under_its_baseline_is_a_line_and_a_row() -> None:
    manifest = load_manifest(MANIFEST)
    found = (("MCA-CONSENT-008", "consent", "vulnerable"),)
    outcomes = [
        Outcome(
            "reference/any-answer-key", found, baselined=(), reran=(0, "1 finding(s) excused; 1 xfailed")
        ),
        Outcome("reference/accept-means-yes", found, baselined=("MCA-CONSENT-003 on delete_file: error, x",)),
        Outcome("reference/duck-typed-answers", found, baselined=(), reran=(1, "1 failed")),
        Outcome("reference/careful", ()),
    ]
    assert corpus.baseline_wrong(manifest, outcomes) == [
        "reference/accept-means-yes: under a baseline of its own findings the run exits 1: "
        "MCA-CONSENT-003 on delete_file: error, x",
        "reference/duck-typed-answers: run --baseline exited 1: 1 failed",
    ]
    rows = corpus.baseline_table(manifest, outcomes).splitlines()[2:]
    assert rows == [
        "| `reference/any-answer-key` | 1 | exits 0 | exit 0: 1 finding(s) excused; 1 xfailed |",
        "| `reference/accept-means-yes` | 1 | exits 1: MCA-CONSENT-003 on delete_file: error, x | not in the sample |",
        "| `reference/duck-typed-answers` | 1 | exits 0 | exit 1: 1 failed |",
    ]


def test_the_sample_run_again_for_real_is_the_first_flawed_case_of_each_server() -> None:
    manifest = load_manifest(MANIFEST)
    sample = corpus.default_sample(manifest.cases)
    flawed = [c for c in manifest.cases if not c.careful]
    # A case with no honest flow errors on its approve control in any real run: never run again under a baseline.
    assert len(sample) == len({c.server for c in flawed if not c.no_honest_flow})
    assert not {c.id for c in flawed if c.no_honest_flow} & set(sample)
    assert sample[0] == next(c.id for c in flawed if c.server == "reference")


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ({"families": ["consent"], "careful": True}, "says why"),
        ({"careful": True, "why": "all the same"}, "says why"),
        ({"families": ["consent"], "expect": {"MCA-CONSENT-008": ["vulnerable"]}, "why": "w"}, "why: is for"),
    ],
)
def test_a_careful_case_says_why_it_runs_only_some_families(case: dict[str, object], why: str) -> None:
    with pytest.raises(ValueError, match=why):
        corpus.Case.model_validate({"id": "c", "server": "s", **case})


def test_with_no_honest_flow_the_failed_approve_control_is_no_miss_and_a_failed_unasked_control_is_the_finding() -> (
    None
):
    manifest = load_manifest(MANIFEST)
    outcomes = [
        # The caller's flag the whole gate: found by flag-bypass, the approve control failing by design.
        Outcome(
            "flag-only/flag-is-the-only-gate",
            (("MCA-FLAGBYPASS-001", "flag-bypass", "vulnerable"),),
            failed_controls=("approve",),
        ),
        # A tool that acts on its first call: the unasked control is what finds it.
        Outcome("photos/revert-unasked", (), failed_controls=("approve", "unasked")),
        Outcome("photos-settings/settings-unasked", (), failed_controls=("approve",)),
        # A careful server with an honest flow whose approve control fails is still a line.
        Outcome("photos/careful", (), failed_controls=("approve",)),
    ]
    tallies, wrong = score(manifest, outcomes)
    assert (tallies["flag-bypass"].detected, tallies["flag-bypass"].expected) == (1, 1)
    assert (tallies["unasked"].detected, tallies["unasked"].expected) == (1, 2)
    assert wrong == [
        "photos-settings/settings-unasked: control-unasked missed (missing, wanted vulnerable)",
        "photos/careful: control approve failed, so its attacks are inconclusive",
    ]
    rows = corpus.baseline_table(manifest, outcomes[:2])
    assert "| `flag-only/flag-is-the-only-gate` | 1 | not gated, no honest flow: " in rows
    assert "| `photos/revert-unasked` | 1 | not gated, no honest flow: " in rows


def test_an_attack_run_on_several_tools_is_found_on_any_and_each_finding_elsewhere_is_counted() -> None:
    manifest = load_manifest(MANIFEST)
    outcomes = [
        # Nothing configured: the same attack on each tool the audit found gated.
        Outcome(
            "desk/decline-acts",
            (("MCA-CONSENT-001", "consent", "refused"), ("MCA-CONSENT-001", "consent", "vulnerable")),
        ),
        Outcome(
            "desk/careful",
            (("MCA-CONSENT-001", "consent", "weak"), ("MCA-CONSENT-001", "consent", "refused")),
        ),
    ]
    tallies, wrong = score(manifest, outcomes)
    assert (tallies["consent"].detected, tallies["consent"].expected) == (1, 1)
    assert (tallies["consent"].false_positives, tallies["consent"].judged) == (1, 2)
    assert wrong == ["desk/careful: MCA-CONSENT-001 is a false positive (weak)"]


def test_a_failed_control_expected_is_one_a_flaw_fails() -> None:
    with pytest.raises(ValueError, match="no control a flaw fails"):
        corpus.Case.model_validate({"id": "c", "server": "s", "expect": {"control-approve": ["vulnerable"]}})


def test_a_refusal_control_that_is_a_flaws_only_finding_is_expected_as_such() -> None:
    # openmymemo's shape (targets/memory): the person's accept is the change, so no attack redeems anything;
    # a review that writes what was rejected fails the decline control, and nothing else finds it.
    manifest = load_manifest(MANIFEST)
    outcomes = [
        Outcome("memory/decline-acts", (), failed_controls=("decline",)),
        Outcome("memory/applies-after-first", (), failed_controls=("approve",)),
    ]
    tallies, wrong = score(manifest, outcomes)
    assert (tallies["decline"].detected, tallies["decline"].expected) == (1, 1)
    assert (tallies["preview-alone"].detected, tallies["preview-alone"].expected) == (0, 1)
    assert wrong == ["memory/applies-after-first: control-preview-alone missed (missing, wanted vulnerable)"]


def test_a_run_whose_only_finding_is_a_failed_refusal_control_has_a_finding_to_baseline() -> None:
    from mcp_confirm_audit.cli import corpus_gate
    from mcp_confirm_audit.models import ControlResult

    declined = ControlResult(
        "propose", "decline", False, True, "the action took effect on the person's decline"
    )
    text = corpus_gate.baseline_text([], [declined])
    assert corpus_gate.gated([], [declined], text) == []
    passed = ControlResult("propose", "decline", True, True, "no effect")
    assert corpus_gate.gated([], [passed], text) == ["no finding to baseline"]
