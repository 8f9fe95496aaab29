"""A run that judged nothing, or only part of the catalogue, never reads clean.

The headline of review.md and of the terminal summary says what was judged:
not audited (the honest flow failed), partial (-k), stopped early (-x); and
SARIF of a run whose honest flow failed carries a result, so a dashboard does
not show green. A run whose every attack is inconclusive stays short.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import load_catalogue

# Each Python stdio target of the in-process runs forked from the SDK's zygote (tests/forking.py).
pytestmark = pytest.mark.usefixtures("forked_targets")

# Every active attack in the catalogue, on the one tool these runs audit.
ATTACKS = len(load_catalogue().active)

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "targets" / "reference" / "server.py"
HOSTILE = ROOT / "targets" / "hostile" / "server.py"


def reference(*options: str) -> str:
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


def headline_of(review: str) -> str:
    return next(line for line in review.splitlines() if line.startswith("**What was judged**"))


def test_a_target_whose_honest_flow_hangs_is_not_audited_everywhere_and_its_terminal_output_is_short(
    pytester: pytest.Pytester,
) -> None:
    # The whole catalogue, every attack inconclusive: each says why in one line.
    command = shlex.join([sys.executable, str(HOSTILE), "--root", "{root}", "--mode", "hang-on-answer"])
    result = pytester.runpytest_subprocess(
        "--mcp-target", command, "--mcp-call-timeout", "1", "--mcp-report-dir", "out", timeout=deadline(120)
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    lines = result.stdout.lines + result.stderr.lines
    assert len(lines) < 300, "\n".join(lines)
    output = "\n".join(lines)
    assert "Traceback" not in output
    assert "_pytest" not in output
    assert "site-packages" not in output  # no framework source, no frames of it
    result.stdout.fnmatch_lines(["judged: not audited: the honest flow failed (delete_file: *"])
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert report["summary"]["judged"].startswith("not audited: the honest flow failed")
    assert {r["verdict"] for r in report["results"]} == {"inconclusive"}
    review = (pytester.path / "out" / "review.md").read_text()
    assert headline_of(review).startswith("**What was judged**: not audited: the honest flow failed")
    assert "Nothing below is a clean bill of health" in review
    sarif = json.loads((pytester.path / "out" / "audit.sarif").read_text())
    run = sarif["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert [(r["ruleId"], r["kind"], r["level"]) for r in run["results"]] == [
        ("control-approve", "open", "error")
    ]


def test_a_run_narrowed_by_k_says_it_is_partial_and_how_it_was_narrowed(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--mcp-target", reference(), "--mcp-report-dir", "out", "-k", "MCA-REPLAY")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([f"judged: partial: 3 of {ATTACKS} attacks selected (-k MCA-REPLAY)"])
    review = (pytester.path / "out" / "review.md").read_text()
    assert (
        headline_of(review)
        == f"**What was judged**: partial: 3 of {ATTACKS} attacks selected (-k MCA-REPLAY)."
    )
    assert json.loads((pytester.path / "out" / "audit.json").read_text())["scope"] == {
        "attacks": ATTACKS,
        "selected": 3,
        "selected_by": "-k MCA-REPLAY",
        "stopped_early": None,
    }


def test_a_run_stopped_by_x_says_so(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--mcp-target", reference("--flaw", "no-ledger"), "--mcp-report-dir", "out", "-k", "MCA-REPLAY", "-x"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["judged: stopped early (-x): 1 of 3 selected attacks run; partial: *"])
    review = (pytester.path / "out" / "review.md").read_text()
    assert headline_of(review).startswith(
        "**What was judged**: stopped early (-x): 1 of 3 selected attacks run"
    )


def test_a_complete_clean_run_says_it_judged_everything_it_ran(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--mcp-target", reference(), "-k", "FORGE-00 or control")
    result.stdout.fnmatch_lines(
        [f"judged: partial: 9 of {ATTACKS} attacks selected (-k FORGE-00 or control)"]
    )
    result.stdout.fnmatch_lines(
        ["family*tool*attacks*vulnerable*weak*refused*", "forged-state*delete_file*9*"]
    )
    result.stdout.fnmatch_lines(["mcp-confirm-audit: forged-state on delete_file: 9 attack(s): *"])


def test_lf_reruns_only_the_attacks_that_failed_and_says_the_run_is_partial(
    pytester: pytest.Pytester,
) -> None:
    flawed = reference("--flaw", "no-ledger")
    first = pytester.runpytest("--mcp-target", flawed, "-k", "MCA-REPLAY or FORGE-001")
    first.assert_outcomes(failed=3, passed=1)
    again = pytester.runpytest("--mcp-target", flawed, "--lf", "--mcp-report-dir", "out")
    # Only the three replays, not the whole catalogue again: every other attack and the five
    # control items are deselected.
    again.assert_outcomes(failed=3, deselected=ATTACKS - 3 + 5)
    again.stdout.fnmatch_lines(
        ["run-last-failure: rerun previous 3 failures", f"judged: partial: 3 of {ATTACKS} *(--lf)"]
    )
