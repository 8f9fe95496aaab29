"""Commands that answer at once: what `--version`, `--help`, a usage error and `fleet --matrix` import.

No timing is asserted (the benchmark case `bench-cli` prints them); what is checked is that the
SDK, pytest and the profile's models are never imported to say what the command line already knows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from deadline import deadline
from packaging.requirements import Requirement

# Which of the heavy modules (the SDK, pytest, the profile's models, YAML) a command imported.
_PROBE = """
import json, sys
from mcp_confirm_audit.cli.main import main
HEAVY = ("mcp", "pytest", "pydantic", "anyio", "httpx2", "mcp_confirm_audit.models", "yaml")
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "loaded": [m for m in HEAVY if m in sys.modules]}), file=sys.stderr)
"""


def loaded_by(cwd: Path, *argv: str) -> tuple[int, list[str]]:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], cwd=cwd, capture_output=True, text=True, timeout=deadline(120)
    )
    said = json.loads(run.stderr.strip().splitlines()[-1])
    return said["code"], said["loaded"]


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--version"], 0),
        (["--help"], 0),
        (["fleet", "--help"], 0),
        (["catalogue", "--colour"], 4),
        (["run"], 4),
    ],
    ids=["version", "help", "fleet-help", "usage-error", "run-without-target"],
)
def test_the_cli_answers_without_importing_the_sdk_pytest_or_yaml(
    tmp_path: Path, argv: list[str], code: int
) -> None:
    assert loaded_by(tmp_path, *argv) == (code, [])


def test_run_help_lists_the_plugin_options_with_pytest_but_without_the_sdk(tmp_path: Path) -> None:
    assert loaded_by(tmp_path, "run", "--help") == (0, ["pytest"])


def test_fleet_matrix_reads_yaml_only(tmp_path: Path) -> None:
    (tmp_path / "FLEET.yaml").write_text("targets:\n  - {name: a, command: 'srv --root {root}'}\n")
    assert loaded_by(tmp_path, "fleet", "FLEET.yaml", "--matrix") == (0, ["yaml"])


def test_a_profile_yaml_syntax_error_answers_before_pytest_and_the_sdk(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("command: srv --root {root}\ntool: [delete\n")
    assert loaded_by(tmp_path, "run", "--profile", "p.yaml") == (4, ["yaml"])


def test_a_profile_key_typo_answers_before_pytest_and_the_sdk(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("command: srv --root {root}\ntol: delete_file\n")
    code, loaded = loaded_by(tmp_path, "run", "--profile", "p.yaml")
    assert code == 4
    # The profile's models need pydantic; the SDK, pytest and the HTTP client wait for an audit.
    assert not {"mcp", "pytest", "httpx2"}.intersection(loaded)


def test_xdist_is_a_dependency_so_dash_n_works_wherever_it_is_shown() -> None:
    required = [Requirement(r) for r in metadata.requires("mcp-confirm-audit") or ()]
    xdist = [r for r in required if r.name == "pytest-xdist"]
    assert xdist, "pytest-xdist is not a dependency"
    assert all(r.marker is None for r in xdist), "pytest-xdist is only in an extra"


def test_bench_cli_prints_a_line_per_case(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_confirm_audit.cli import bench_cli
    from mcp_confirm_audit.cli.main import main

    code = main(["bench-cli", "--repeat", "1"])
    printed = capsys.readouterr().out.splitlines()
    assert [line.split("  ")[0].strip() for line in printed[1:-1]] == list(bench_cli.CASES)
    # No timing asserted: the exit code says whether a line said "over", whichever it said.
    marks = [line.split()[-1] for line in printed[1:-1]]
    assert set(marks) <= {"ok", "over"}
    assert code == (1 if "over" in marks else 0)
