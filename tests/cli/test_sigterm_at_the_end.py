"""A SIGTERM that comes while pytest is ending the session (the reports being written, the targets
stopped) lets that end finish: the run exits "interrupted", with its reports, and no internal error.

The signal is sent by a plugin's own `pytest_sessionfinish`, so it lands inside the session's end
every time (no sleep, no race): through pytest, and through `mcp-confirm-audit run`, whose own
SIGTERM handler stands in until the plugin's takes over.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TARGET = f"py:{REPO / 'targets' / 'reference' / 'server.py'}:build_server"
_PLUGIN = """
import os, signal


def pytest_sessionfinish(session):
    os.kill(os.getpid(), signal.SIGTERM)
"""


@pytest.mark.parametrize(
    "argv",
    [
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--mcp-target", TARGET],
        [sys.executable, "-m", "mcp_confirm_audit.cli.main", "run", TARGET, "--", "-p", "no:cacheprovider"],
    ],
    ids=["pytest", "cli-run"],
)
def test_a_sigterm_during_the_sessions_end_lets_it_finish_and_exits_interrupted(
    tmp_path: Path, argv: list[str]
) -> None:
    (tmp_path / "sigterm_at_the_end.py").write_text(_PLUGIN)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [*argv, "-p", "sigterm_at_the_end", "-k", "control", "--mcp-report-dir", "out"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path), "PYTEST_ADDOPTS": ""},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    said = done.stdout + done.stderr
    assert "INTERNALERROR" not in said, said[-3000:]
    assert done.returncode == pytest.ExitCode.INTERRUPTED, said[-3000:]
    assert (tmp_path / "out" / "audit.json").is_file()
