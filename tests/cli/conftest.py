"""The fleet run test_fleet.py and test_fleet_watch.py both read: one per worker, not one per file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from deadline import deadline
from fleets import cli, write_fleet


@pytest.fixture(scope="session")
def fleet_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """`fleet ci/FLEET.yaml -n 2` over the seven targets of tests/cli/fleets.py, and its output folder."""
    folder = tmp_path_factory.mktemp("fleet")
    write_fleet(folder)
    run = cli(folder, "fleet", "ci/FLEET.yaml", "-n", "2", "-o", "out", "--timeout", str(deadline(900)))
    return run, folder / "out"
