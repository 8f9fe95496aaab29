"""The CI gate: a baseline excuses known findings, catches fixed ones as stale, refuses unknown ids."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from once import once

from mcp_confirm_audit.report.baseline_file import baseline_from_audit

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
# Each Python stdio target of the in-process runs forked from the SDK's zygote (tests/forking.py): what is
# proven is the plugin's items, verdicts, reports and exit codes; the start as written is the hostile
# tests', the docs' and test_transports.py's (over HTTP).
pytestmark = pytest.mark.usefixtures("forked_targets")
# The three replays by id: a new replay variant in the catalogue must not change these counts.
REPLAY = ("-k", "MCA-REPLAY-001 or MCA-REPLAY-002 or MCA-REPLAY-003 or control")


def target(*options: str) -> str:
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


@pytest.fixture
def replay_baseline(pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A baseline written from a run of the server that never spends a state: three replay findings.

    The first run is made by the first test that needs it and read again by the others, in whichever
    xdist worker they run (tests/once.py).
    """

    def first_run(folder: Path) -> None:
        first = pytester.runpytest(
            "--mcp-target", target("--flaw", "no-ledger"), "--mcp-report-dir", "first", *REPLAY
        )
        assert first.ret == pytest.ExitCode.TESTS_FAILED
        shutil.copyfile(pytester.path / "first" / "audit.json", folder / "audit.json")

    document: dict[str, Any] = json.loads(
        (once(tmp_path_factory, "gate-first", first_run) / "audit.json").read_text()
    )
    path = pytester.path / "baseline.yaml"
    # The reasons a person writes in place of the TODOs (the gate refuses a TODO).
    text = baseline_from_audit(document, "first/audit.json")
    path.write_text(text.replace("TODO say why this is accepted", "accepted until the ledger lands"))
    return path


def test_with_the_findings_baselined_the_run_passes_and_the_reports_still_show_them(
    pytester: pytest.Pytester, replay_baseline: Path
) -> None:
    run = pytester.runpytest(
        "--mcp-target",
        target("--flaw", "no-ledger"),
        "--mcp-baseline",
        str(replay_baseline),
        "--mcp-report-dir",
        "out",
        "-rx",
        *REPLAY,
    )
    assert run.ret == pytest.ExitCode.OK
    run.assert_outcomes(passed=4, skipped=1, xfailed=3)
    run.stdout.fnmatch_lines(
        [
            "baseline *baseline.yaml: 3 accepted, 0 stale, 0 layer drift",
            "*XFAIL*MCA-REPLAY-001*baselined in *baseline.yaml: accepted until the ledger lands*",
        ]
    )
    audit = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert {r["id"]: (r["verdict"], r["baseline"]["status"]) for r in audit["results"]} == {
        f"MCA-REPLAY-00{n}": ("vulnerable", "accepted") for n in (1, 2, 3)
    }
    assert audit["baseline"]["accepted"] == 3


def test_once_the_flaw_is_fixed_the_same_baseline_fails_as_stale(
    pytester: pytest.Pytester, replay_baseline: Path
) -> None:
    run = pytester.runpytest(
        "--mcp-target", target(), "--mcp-baseline", str(replay_baseline), "--mcp-report-dir", "out", *REPLAY
    )
    assert run.ret == pytest.ExitCode.TESTS_FAILED
    run.assert_outcomes(passed=4, skipped=1, failed=3)
    run.stdout.fnmatch_lines(
        [
            "*STALE baseline entry in *baseline.yaml: no longer found (now refused)*remove it*",
            "baseline *baseline.yaml: 0 accepted, 3 stale, 0 layer drift",
        ]
    )
    audit = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert {r["baseline"]["status"] for r in audit["results"]} == {"stale"}


def test_an_id_that_is_not_in_the_catalogue_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".yaml", baseline="findings:\n  - {id: MCA-REPLAY-999, tool: delete_file, reason: typo}\n"
    )
    run = pytester.runpytest("--mcp-target", target(), "--mcp-baseline", "baseline.yaml")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    run.stderr.fnmatch_lines(
        ["*baseline baseline.yaml: findings[[]0[]]: 'MCA-REPLAY-999' is not in the catalogue*"]
    )


def test_a_refusal_by_another_layer_is_a_warning_and_fails_under_strict(pytester: pytest.Pytester) -> None:
    # The careful server's SDK boundary refuses a random state; this baseline expects the tool to.
    pytester.makefile(".yaml", baseline="layers:\n  - {id: MCA-FORGE-001, tool: delete_file, layer: tool}\n")
    args = ["--mcp-target", target(), "--mcp-baseline", "baseline.yaml", "-k", "FORGE-001", "-W", "default"]
    lenient = pytester.runpytest(*args)
    assert lenient.ret == pytest.ExitCode.OK
    lenient.stdout.fnmatch_lines(
        [
            "*LayerDrift: MCA-FORGE-001 layer drift on delete_file: refused by sdk-boundary, not by tool*",
            "baseline *: 0 accepted, 0 stale, 1 layer drift",
        ]
    )
    strict = pytester.runpytest(*args, "--mcp-strict")
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(["*LAYER DRIFT (--mcp-strict): refused by sdk-boundary, not by tool*"])


def test_an_accepted_finding_on_a_tool_no_longer_audited_fails_the_run_as_stale(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".yaml", baseline="findings:\n  - {id: MCA-FORGE-001, tool: gone_tool, reason: old}\n")
    run = pytester.runpytest("--mcp-target", target(), "--mcp-baseline", "baseline.yaml", "-k", "FORGE-001")
    assert run.ret == pytest.ExitCode.TESTS_FAILED
    run.stdout.fnmatch_lines(
        [
            "  stale: MCA-FORGE-001 on gone_tool: the target no longer offers that tool*",
            "FAILED: 1 stale baseline entr* matched no result; remove them from baseline.yaml",
        ]
    )


def test_the_ini_twin_reads_the_baseline_relative_to_the_ini_file(pytester: pytest.Pytester) -> None:
    pytester.mkdir("ci").joinpath("baseline.yaml").write_text(
        "findings:\n  - {id: MCA-REPLAY-001, tool: delete_file, reason: tracked as 12}\n"
    )
    pytester.makeini("[pytest]\nmcp_baseline = ci/baseline.yaml\n")
    pytester.mkdir("elsewhere")
    run = pytester.runpytest(
        "--mcp-target",
        target("--flaw", "no-ledger"),
        "-k",
        "MCA-REPLAY-001",
        "--rootdir",
        str(pytester.path),
        "-c",
        str(pytester.path / "tox.ini"),
    )
    assert run.ret == pytest.ExitCode.OK
    run.assert_outcomes(xfailed=1)
