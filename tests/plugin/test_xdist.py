"""pytest-xdist: two workers give the serial run's results, and the controller alone writes the reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
# The flawed reference server built in each process that runs its items: what is proven here is how
# xdist shares out the items and who writes the reports, not how a target is started (test_plugin.py's
# xdist case and the matrices start real processes), so no server process is started at all.
PROFILE = f"""
command: py:{SERVER}:build_server
factory_args: {{flaws: [no-ledger]}}
tool: delete_file
"""
# Records which process writes reports: the controller, or a worker (which must not).
SPY = """
import mcp_confirm_audit.run.audit as plugin

_write = plugin.write_reports
_role = []


def pytest_configure(config):
    _role.append(config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller")


def _spy(directory, report):
    with open("writers.log", "a") as log:
        log.write(_role[0] + "\\n")
    return _write(directory, report)


plugin.write_reports = _spy
"""


def _judged(path: Path) -> tuple[Any, ...]:
    audit = json.loads(path.read_text())
    results = [(r["id"], r["tool"], r["verdict"], r["layer"], r["asked_user"]) for r in audit["results"]]
    controls = [(c["name"], c["passed"], c["applicable"]) for c in audit["controls"]]
    return results, controls, audit["target"]["server"], audit["target"]["tools"]


def test_two_workers_give_the_serial_results_and_one_set_of_reports(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite may itself run under xdist
    # Nine items for two workers: the controls, the three replays (vulnerable) and one forgery (refused).
    # Each worker builds its own server in process, as the serial run does: the same results.
    (pytester.path / "profile.yaml").write_text(PROFILE)
    args = ["--mcp-profile", "profile.yaml", "-k", "MCA-REPLAY or MCA-FORGE-001 or control"]
    # The serial run in this process (what is compared is its results, not its process), the parallel one
    # in its own: the spy goes in only after the serial run, so it never patches this process's plugin.
    serial = pytester.runpytest_inprocess(*args, "--mcp-report-dir", "serial")
    pytester.makeconftest(SPY)
    parallel = pytester.runpytest_subprocess(*args, "-n", "2", "--mcp-report-dir", "parallel")
    assert serial.ret == parallel.ret == pytest.ExitCode.TESTS_FAILED
    # (xdist does not count deselected items; everything else must agree.)
    assert parallel.parseoutcomes() == {k: v for k, v in serial.parseoutcomes().items() if k != "deselected"}
    assert _judged(pytester.path / "parallel" / "audit.json") == _judged(
        pytester.path / "serial" / "audit.json"
    )
    assert (pytester.path / "writers.log").read_text().split() == ["controller"]
    assert sorted(p.name for p in (pytester.path / "parallel").iterdir()) == [
        "audit.json",
        "audit.sarif",
        "review.md",
    ]
    parallel.stdout.fnmatch_lines(
        ["MCA-REPLAY-001 after-success*vulnerable*none (it took effect)*", "report: parallel*audit.json"]
    )
