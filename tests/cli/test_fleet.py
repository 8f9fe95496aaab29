"""`fleet`, `fleet --matrix` and `merge`: many targets, each audited on its own, one summary.

The five targets of tests/cli/fleets.py (the careful reference server, its no-ledger flaw, the
PyPI server mcp-confirm, the reference server in process, and one that cannot start) run two at a time, in the one fleet run these tests
share with test_fleet_watch.py; the merged SARIF is checked against the official 2.1.0 schema, and
the matrix against what GitHub's matrix takes.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fleets import NAMES, ONE_ATTACK, write_fleet

from mcp_confirm_audit.cli.main import main

FleetRun = tuple[subprocess.CompletedProcess[str], Path]


def test_a_fleet_of_five_writes_a_folder_per_target_and_one_summary(fleet_run: FleetRun) -> None:
    run, out = fleet_run
    # A finding, and a target that failed.
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, run.stdout + run.stderr
    summary = json.loads((out / "fleet.json").read_text())
    by_name = {t["name"]: t for t in summary["targets"]}
    assert list(by_name) == NAMES
    for name in ("careful", "in-process"):
        assert by_name[name]["status"] == "clean", by_name[name]
        assert by_name[name]["verdicts"]["refused"] == 1
    assert (by_name["no-ledger"]["status"], by_name["no-ledger"]["verdicts"]["vulnerable"]) == ("findings", 1)
    assert by_name["mcp-confirm"]["server"]["name"] == "mcp-confirm"
    for name in list(by_name)[:-1]:
        assert {p.name for p in (out / name).iterdir()} >= {
            "audit.json",
            "review.md",
            "audit.sarif",
            "run.log",
        }


def test_a_target_that_fails_does_not_stop_the_others_and_says_why_in_one_line(
    fleet_run: FleetRun,
) -> None:
    _, out = fleet_run
    failed = json.loads((out / "fleet.json").read_text())["targets"][-1]
    assert failed["status"] == "failed"
    assert failed["exit_code"] == pytest.ExitCode.INTERRUPTED
    assert failed["failure"].startswith("exit 2: mcp-confirm-audit: ")
    assert "no-such-mcp-server-anywhere" in failed["failure"]
    assert "\n" not in failed["failure"]
    table = (out / "fleet.md").read_text()
    assert (
        "| `never-starts` | `-` | failed | 0 | - | - | - | - | - | - | - | `exit 2: mcp-confirm-audit: "
        in table
    )
    assert "5 target(s): 4 audited, 1 failed" in table


def test_the_merged_sarif_has_a_run_per_target_and_is_valid_sarif_2_1_0(
    fleet_run: FleetRun, sarif_errors: Any
) -> None:
    _, out = fleet_run
    document = json.loads((out / "fleet.sarif").read_text())
    assert sarif_errors(document) == []
    runs = document["runs"]
    assert [r["automationDetails"]["id"] for r in runs] == [f"mcp-confirm-audit/{name}/" for name in NAMES]
    assert [r["ruleId"] for r in runs[1]["results"]] == ["MCA-REPLAY-001"]
    assert runs[-1]["invocations"][0]["executionSuccessful"] is False


def test_merge_of_the_folders_ci_uploaded_gives_the_same_summary(fleet_run: FleetRun, tmp_path: Path) -> None:
    _, out = fleet_run
    # As downloaded from a matrix: one folder per artifact, named as the action names them.
    downloaded = tmp_path / "artifacts"
    for target in out.iterdir():
        if target.is_dir():
            (downloaded / f"mcp-audit-{target.name}").mkdir(parents=True)
            for report in target.iterdir():
                (downloaded / f"mcp-audit-{target.name}" / report.name).write_bytes(report.read_bytes())
    (downloaded / "mcp-audit-never-uploaded").mkdir()
    merged = tmp_path / "merged"
    code = main(["merge", *sorted(str(p) for p in downloaded.iterdir()), "-o", str(merged)])
    assert code == pytest.ExitCode.TESTS_FAILED
    fleet = {t["name"]: t for t in json.loads((out / "fleet.json").read_text())["targets"]}
    again = {t["name"]: t for t in json.loads((merged / "fleet.json").read_text())["targets"]}
    assert set(again) == {*fleet, "never-uploaded"}
    for name, target in fleet.items():
        assert {k: again[name][k] for k in ("status", "verdicts", "failure")} == {
            k: target[k] for k in ("status", "verdicts", "failure")
        }
    assert again["never-uploaded"]["failure"].startswith("no audit.json in ")


def test_matrix_prints_what_githubs_matrix_syntax_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fleet", str(write_fleet(tmp_path)), "--matrix"]) == 0
    matrix = json.loads(capsys.readouterr().out)
    # strategy.matrix: ${{ fromJSON(...) }} takes an object; `include` a list of objects of scalars.
    assert set(matrix) == {"include"}
    assert 0 < len(matrix["include"]) <= 256
    for job in matrix["include"]:
        assert set(job) == {"name", "profile", "target", "args", "baseline", "category"}
        assert all(isinstance(value, str) for value in job.values())
    assert matrix["include"][0]["name"] == "careful"
    assert matrix["include"][1]["args"] == shlex.join(shlex.split(ONE_ATTACK))
    names = [job["name"] for job in matrix["include"]]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize(
    ("fleet", "said"),
    [
        ("- name: a", "must be a mapping with one key, 'targets', a list"),
        ("targets: []", "'targets' is empty"),
        ("targets: [{name: a}]", "target 1 (a): give a 'profile' (a file) or a 'command' (with {root})"),
        ("targets: [{name: 'a b', command: x}]", "'name' must be a folder name"),
        ("targets: [{name: a, command: x}, {name: a, command: y}]", "two targets are named 'a'"),
        ("targets: [{name: a, command: x, flaws: 1}]", "unknown key 'flaws'"),
        ("targets: [{name: a, profile: gone.yaml}]", "profile 'gone.yaml' is not a file"),
    ],
)
def test_a_bad_fleet_is_a_usage_error_of_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fleet: str, said: str
) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(fleet)
    assert main(["fleet", str(path)]) == pytest.ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert said in err
    assert len(err.strip().splitlines()) == 1
