"""A path to green that stays honest: the next step for each inconclusive result, an exclusion with
its reason, a baseline that says what it left out and refuses placeholder reasons, `--prune`, and a
re-run command that works in the checkout that wrote it."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from mcp_confirm_audit.catalogue.loader import load_catalogue
from mcp_confirm_audit.cli.main import main
from mcp_confirm_audit.engine.baseline import load_baseline
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.models import Effect, Result, Verdict
from mcp_confirm_audit.profile.loader import load_profile
from mcp_confirm_audit.report import build_report
from mcp_confirm_audit.report.review_md import ReviewMarkdown

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "targets" / "reference" / "server.py"
GOLDEN_AUDIT = ROOT / "tests" / "report" / "golden" / "audit.json"

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestWarning")


def _result(verdict: Verdict, reason: str, attack_id: str = "MCA-REPLAY-001") -> Result:
    return Result(
        id=attack_id,
        family="replay",
        title="t",
        tool="delete_file",
        variant="v",
        severity="high",
        level="MUST",
        verdict=verdict,
        layer=None,
        asked_user=False,
        effect=Effect(),
        reason=reason,
        evidence=(),
        refs=(),
    )


@pytest.mark.parametrize(
    ("reason", "step"),
    [
        ("could not set the attack up: no second process", "give the profile what the attack needs"),
        ("the target stopped answering: Connection closed", "read the target's stderr"),
        ("the target stopped answering once (x), then answered again", "re-run it alone"),
        ("no hostile value reached a question: the target refused", "let the tool ask about the values"),
        ("something nobody foresaw", "add an `effect:` probe, or the profile's `answer:` and `setup:`"),
    ],
)
def test_the_review_names_every_inconclusive_result_with_the_step_that_would_judge_it(
    reason: str, step: str
) -> None:
    target = {"command": "srv --root {root}", "profile": "targets/srv.yaml", "tools": ["delete_file"]}
    report = build_report([_result(Verdict.INCONCLUSIVE, reason)], [], target)
    text = ReviewMarkdown().render(report)
    untested = text.split("## Not testable here, and why")[1]
    [row] = [line for line in untested.splitlines() if line.startswith("| MCA-REPLAY-001 ")]
    assert "| next step that would judge it |" in untested
    assert step in row
    if "stopped answering once" in reason or "could not set" in reason:
        assert (
            "`mcp-confirm-audit run --profile targets/srv.yaml -- -k 'MCA-REPLAY-001 and delete_file'`" in row
        )


def test_an_excluded_attack_is_named_with_its_reason_never_as_refused() -> None:
    reason = "excluded by the profile (p.yaml): a single-process CLI, no second redeemer"
    report = build_report([_result(Verdict.EXCLUDED, reason)], [], {"command": "srv {root}", "tools": []})
    text = ReviewMarkdown().render(report)
    assert "| MCA-REPLAY-001 | `delete_file` | excluded | " + reason + " | - |" in text
    assert "1 excluded by the profile" in text
    assert "refused" not in next(line for line in text.splitlines() if "MCA-REPLAY-001" in line)


@pytest.mark.parametrize("reason", ["TODO say why", "", "todo", "  tbd later", "-"])
def test_a_profile_exclusion_needs_a_reason(tmp_path: Path, reason: str) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "command: srv --root {root}\nexclude:\n  - {id: MCA-REPLAY-001, reason: " + json.dumps(reason) + "}\n"
    )
    with pytest.raises(
        UsageError, match=r"exclude\[0\]: 'reason' must be a sentence \(not empty, not a TODO\)"
    ):
        load_profile(profile)


def test_a_profile_exclusion_is_read_with_its_reason(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(
        "command: srv --root {root}\nexclude:\n  - {id: MCA-REPLAY-001, reason: 'one process, no race'}\n"
    )
    assert load_profile(profile).exclude == {"MCA-REPLAY-001": "one process, no race"}


@pytest.mark.parametrize("reason", ["TODO say why this is accepted (found 2026-07-28: x)", "todo", " "])
def test_the_gate_refuses_a_baseline_whose_reason_is_a_placeholder(tmp_path: Path, reason: str) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump({"findings": [{"id": "MCA-REPLAY-001", "tool": "t", "reason": reason}]}))
    with pytest.raises(UsageError, match=r"findings\[0\] \(MCA-REPLAY-001\): 'reason' must say why"):
        load_baseline(path, load_catalogue())


def test_baseline_says_which_results_it_left_out_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(GOLDEN_AUDIT.read_text())
    unjudged = next(r for r in document["results"] if r["verdict"] == "inconclusive")
    out = tmp_path / "baseline.yaml"
    assert main(["baseline", str(GOLDEN_AUDIT), "-o", str(out)]) == 0
    said = capsys.readouterr().err
    assert "left out 1 inconclusive result(s), which a baseline cannot excuse" in said
    assert f"  {unjudged['id']} on {unjudged['tool']}: inconclusive, " in said
    assert "replace each 'TODO say why'" in said
    assert f"#   {unjudged['id']} on {unjudged['tool']}: inconclusive" in out.read_text()


def test_baseline_prune_drops_the_entries_the_audit_found_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "baseline.yaml"
    base.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "findings": [
                    {"id": "MCA-REPLAY-001", "tool": "delete_file", "reason": "still there"},
                    {"id": "MCA-REPLAY-002", "tool": "delete_file", "reason": "fixed since"},
                    {"id": "MCA-REPLAY-003", "tool": "gone_tool", "reason": "tool removed"},
                ],
            }
        )
    )
    audit = tmp_path / "audit.json"
    audit.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "baseline": {
                    "file": str(base),
                    "unmatched": [
                        "MCA-REPLAY-003 on gone_tool: the target no longer offers that tool for audit"
                    ],
                },
                "results": [
                    {"id": "MCA-REPLAY-001", "tool": "delete_file", "baseline": {"status": "accepted"}},
                    {"id": "MCA-REPLAY-002", "tool": "delete_file", "baseline": {"status": "stale"}},
                ],
            }
        )
    )
    assert main(["baseline", str(audit), "--prune", str(base)]) == 0
    assert "dropped 2 stale entries" in capsys.readouterr().err
    kept = load_baseline(base, load_catalogue())
    assert [(f.id, f.tool, f.reason) for f in kept.findings] == [
        ("MCA-REPLAY-001", "delete_file", "still there")
    ]


def test_prune_of_an_audit_run_without_a_baseline_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "baseline.yaml"
    base.write_text("findings: []\n")
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps({**json.loads(GOLDEN_AUDIT.read_text()), "baseline": None}))
    assert main(["baseline", str(audit), "--prune", str(base)]) == pytest.ExitCode.USAGE_ERROR
    assert "was not written with a baseline: run the audit with --baseline" in capsys.readouterr().err


def _cli_here(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """`mcp-confirm-audit ARGV` in this process, from the current folder: its exit code, stdout+stderr.

    The CLI is pytest.main in the caller's process either way (tests/cli/test_cli.py and
    test_errors_point_the_way.py run it as a person does, in a subprocess); the target is forked
    from the SDK's zygote (forked_targets) instead of a fresh interpreter.
    """
    capsys.readouterr()
    code = main(list(argv))
    said = capsys.readouterr()
    return code, said.out + said.err


@pytest.mark.usefixtures("forked_targets")
def test_an_exclusion_is_reported_everywhere_and_the_printed_rerun_works_beside_a_projects_tests(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # A checkout with its own suite and conftest.py: plain `pytest` there would run them too.
    pytester.mkdir("tests")
    (pytester.path / "tests" / "test_own.py").write_text("def test_own_suite():\n    assert False\n")
    (pytester.path / "conftest.py").write_text("raise RuntimeError('the project conftest was loaded')\n")
    command = shlex.join([sys.executable, str(SERVER), "--root", "{root}", "--flaw", "no-ledger"])
    reason = "one process only: there is no second redeemer to race"
    (pytester.path / "target.yaml").write_text(
        yaml.safe_dump(
            {"command": command, "exclude": [{"id": "MCA-REPLAY-001", "reason": reason}]}, width=1000
        )
    )
    code, printed = _cli_here(
        capsys,
        "run",
        "--profile",
        "target.yaml",
        "--report-dir",
        "out",
        "--",
        "-k",
        "MCA-REPLAY-001 or MCA-REPLAY-002",
        "--junitxml=out/junit.xml",
    )
    assert code == pytest.ExitCode.TESTS_FAILED, printed
    assert "1 failed" in printed
    assert "test_own" not in printed
    said = f"excluded by the profile (target.yaml): {reason}"
    audit = json.loads((pytester.path / "out" / "audit.json").read_text())
    verdicts = {r["id"]: (r["verdict"], r["reason"]) for r in audit["results"]}
    assert verdicts["MCA-REPLAY-001"] == ("excluded", said)
    assert verdicts["MCA-REPLAY-002"][0] == "vulnerable"
    review = (pytester.path / "out" / "review.md").read_text()
    assert f"| MCA-REPLAY-001 | `delete_file` | excluded | {said} | - |" in review
    sarif = json.loads((pytester.path / "out" / "audit.sarif").read_text())
    notes = sarif["runs"][0]["invocations"][0]["toolConfigurationNotifications"]
    assert notes == [
        {
            "level": "note",
            "message": {"text": f"MCA-REPLAY-001 on delete_file: {said}"},
            "descriptor": {"id": "MCA-REPLAY-001"},
        }
    ]
    assert "MCA-REPLAY-001" not in {r["ruleId"] for r in sarif["runs"][0]["results"]}
    junit = ElementTree.parse(pytester.path / "out" / "junit.xml")
    [case] = [c for c in junit.iter("testcase") if "MCA-REPLAY-001" in c.get("name", "")]
    assert case.find("skipped") is not None
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["mcp.verdict"] == "excluded"
    assert json.loads(properties["mcp_audit_result"])["reason"] == said

    # The command printed under the finding, run as printed, in the same checkout.
    [rerun] = re.findall(r"```sh\n(mcp-confirm-audit run .*MCA-REPLAY-002.*)\n```", review)
    words = shlex.split(rerun)
    code, printed = _cli_here(capsys, *words[1:])
    assert code == pytest.ExitCode.TESTS_FAILED, printed
    assert "1 failed" in printed
    assert "test_own" not in printed
    assert "conftest" not in printed


def test_a_baselined_finding_whose_attack_the_profile_excludes_is_neither_accepted_nor_stale(
    tmp_path: Path,
) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(
        yaml.safe_dump({"findings": [{"id": "MCA-REPLAY-001", "tool": "delete_file", "reason": "known"}]})
    )
    baseline = load_baseline(path, load_catalogue())
    assert baseline.mark(_result(Verdict.EXCLUDED, "excluded by the profile (p.yaml): one process")) is None
