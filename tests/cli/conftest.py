"""The fleet run test_fleet.py and test_fleet_watch.py both read: one per test run, not one per file or worker."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from deadline import deadline
from fleets import cli, write_fleet
from once import once


def _fleet(folder: Path) -> None:
    write_fleet(folder)
    run = cli(folder, "fleet", "ci/FLEET.yaml", "-n", "2", "-o", "out", "--timeout", str(deadline(900)))
    said = {"args": run.args, "returncode": run.returncode, "stdout": run.stdout, "stderr": run.stderr}
    (folder / "run.json").write_text(json.dumps(said))


@pytest.fixture(scope="session")
def fleet_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`fleet ci/FLEET.yaml -n 2` over the five targets of tests/cli/fleets.py, and its output folder.

    Made once for the whole run (tests/once.py): the xdist workers that run these tests read one fleet.
    """
    folder = once(tmp_path_factory, "fleet", _fleet)
    said = json.loads((folder / "run.json").read_text())
    return subprocess.CompletedProcess(**said), folder / "out"
