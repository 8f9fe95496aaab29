"""The plugin end to end on a reference server: items, verdict mapping, summary, report, exit codes."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
# Each Python stdio target of the in-process runs forked from the SDK's zygote (tests/forking.py): what is
# proven is the plugin's items, verdicts, reports and exit codes; the start as written is the hostile
# tests', the docs' and test_transports.py's (over HTTP).
pytestmark = pytest.mark.usefixtures("forked_targets")
NEVER_ASKS = '''
import sys
from pathlib import Path
from mcp.server.mcpserver import MCPServer

root = Path(sys.argv[sys.argv.index("--root") + 1])
server = MCPServer(name="never-asks")

@server.tool()
def delete_file(path: str) -> str:
    """Delete a file without asking anyone."""
    (root / path).unlink()
    return "deleted"

server.run(transport="stdio")
'''


def target(*options: str) -> str:
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


def test_a_flaw_fails_its_attacks_with_evidence_and_writes_the_report(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--mcp-target",
        target("--flaw", "no-ledger"),
        "--mcp-report-dir",
        "out",
        "-k",
        "MCA-REPLAY or control",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=3, passed=4, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*MCA-REPLAY-002 A declined question's state redeemed again with an accept*",
            "*verdict: vulnerable*refused by: none (it took effect)*",
            "*disk removed: root/*victim.txt*",
            "*which layer refused each attack*",
            "MCA-REPLAY-00? *delete_file*vulnerable*none (it took effect)*",
            "report: out*audit.json",
        ]
    )
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert {r["family"] for r in report["results"]} == {"replay"}
    assert {r["verdict"] for r in report["results"]} == {"vulnerable"}
    assert [c["name"] for c in report["controls"]] == ["approve", "cancel", "decline", "negative", "refusals"]
    assert set(report["results"][0]) >= {
        "id",
        "family",
        "title",
        "tool",
        "variant",
        "verdict",
        "layer",
        "asked_user",
        "effect",
        "evidence",
        "refs",
    }


def test_the_careful_server_passes_and_says_which_layer_refused(pytester: pytest.Pytester) -> None:
    chosen = "forged or MCA-REPLAY or control-preview-alone"
    result = pytester.runpytest("--mcp-target", target(), "-k", chosen, "-p", "no:randomly", "-rs")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "MCA-FORGE-001 random-token*delete_file*refused*sdk-boundary",
            "MCA-REPLAY-001 after-success*refused*tool*",
        ]
    )
    # An MRTR tool's preview-alone control item is skipped, saying why (a token flow's is run: below).
    result.stdout.fnmatch_lines(["*SKIPPED*an MRTR flow has no preview*"])


def test_asking_before_the_root_check_is_a_warning_and_fails_under_strict(pytester: pytest.Pytester) -> None:
    # -W default: the outer suite turns warnings into errors, and in-process
    # pytester runs inherit that.
    args = ["--mcp-target", target("--flaw", "ask-before-check"), "-k", "ROOT-001", "-W", "default"]
    lenient = pytester.runpytest(*args)
    assert lenient.ret == pytest.ExitCode.OK
    lenient.stdout.fnmatch_lines(["*AuditWarning: MCA-ROOT-001 weak*refused only after asking the user*"])
    strict = pytester.runpytest(*args, "--mcp-strict")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED


def test_a_tool_that_never_asks_makes_attacks_errors_never_passes(pytester: pytest.Pytester) -> None:
    script = pytester.makepyfile(never_asks=NEVER_ASKS)
    result = pytester.runpytest(
        "--mcp-target",
        f"{sys.executable} {script} --root {{root}}",
        "-k",
        "MCA-REPLAY or control-approve",
        "--mcp-report-dir",
        "out",
    )
    outcomes = result.parseoutcomes()
    # The approve control is the error; the attacks it leaves unjudged fail the run as inconclusive.
    assert (outcomes.get("errors"), outcomes.get("inconclusive")) == (1, 3), outcomes
    assert "passed" not in outcomes
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*the tool acted without asking for confirmation*"])
    # Deleting the file with nobody asked is itself the finding a reviewer hands over, not only
    # a run that could not be judged.
    review = (pytester.path / "out" / "review.md").read_text()
    assert "**1 finding(s)**" in review
    assert "1. **control unasked** (high): `delete_file` acted with no confirmation at all" in review
    sarif = json.loads((pytester.path / "out" / "audit.sarif").read_text())
    assert "control-unasked" in {r["ruleId"] for r in sarif["runs"][0]["results"]}


def test_the_ini_twin_configures_the_target(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"[pytest]\nmcp_target = {target()}\n")
    result = pytester.runpytest("-k", "CONSENT-001", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["mcp-audit::MCA-CONSENT-001-decline[[]delete_file[]]"])


# The reference server behind a line that counts its starts: each start appends one line to a log.
COUNTED = """
import os, sys
with open(sys.argv[1], "a") as log:
    log.write("started\\n")
os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
"""


def test_collect_only_starts_the_server_to_list_its_tools_and_nothing_more(pytester: pytest.Pytester) -> None:
    # The attacks that need a second process, another era or a client that declares no elicitation
    # are collected, but none will run: their processes are not started in the background either.
    counter, starts = pytester.path / "counted.py", pytester.path / "starts.log"
    counter.write_text(COUNTED)
    command = shlex.join([sys.executable, str(counter), str(starts), str(SERVER), "--root", "{root}"])
    # Unconfined: the counter writes its log in pytester's folder, which is the inner run's home, and a
    # confined target sees the home empty and its writes kept apart (tests/hostile/test_confinement.py).
    result = pytester.runpytest("--mcp-target", command, "--collect-only", "-q", "--mcp-no-confinement")
    assert result.ret == pytest.ExitCode.OK
    collected = result.stdout.str()
    assert "MCA-FORGE-006" in collected
    assert "MCA-DOWNGRADE-001" in collected
    assert "MCA-ERAS-001" in collected
    assert starts.read_text().splitlines() == ["started"]


ARM = Path(__file__).resolve().parents[2] / "targets" / "robot_arm" / "server.py"


def test_a_token_flows_preview_alone_is_a_control_item_of_its_own(pytester: pytest.Pytester) -> None:
    # A preview that moved the arm would open the gate it previews: that is its own item,
    # as a decline is an MRTR flow's; the MRTR "no" items are skipped with why.
    arm = shlex.join([sys.executable, str(ARM), "--root", "{root}", "--mechanism", "token"])
    profile = pytester.path / "arm.yaml"
    profile.write_text(f"command: {json.dumps(arm)}\ntool: move_joint\n")
    result = pytester.runpytest(
        "--mcp-profile", str(profile), "-k", "control", "--mcp-report-dir", "out", "-rs"
    )
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=2, skipped=3)
    result.stdout.fnmatch_lines(["*SKIPPED*a token flow has no decline*"])
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    alone = next(c for c in report["controls"] if c["name"] == "preview-alone")
    assert alone["passed"], alone
    assert alone["detail"].startswith("no effect")
    # The controls' exchanges, which the terminal shortens, are in audit.json whole.
    approve = next(c for c in report["controls"] if c["name"] == "approve")
    assert any("confirm with the token" in line and "confirm_token" in line for line in approve["evidence"])
