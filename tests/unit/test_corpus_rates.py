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
