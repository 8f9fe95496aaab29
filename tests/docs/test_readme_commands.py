"""The README, as a person who never saw the project reads it: its own code blocks, run as written.

A newcomer with a clone runs the "Audit your own server" block in a folder of their own and gets a
review of a reference server; the test-suite command is the one `.ci/run` runs; every link resolves.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
# The exit codes the README documents for an audit that ran: 0 nothing found, 1 findings.
AUDITED = {int(pytest.ExitCode.OK), int(pytest.ExitCode.TESTS_FAILED)}


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, flags=re.DOTALL | re.MULTILINE)
    assert match, f"the README has a section '## {title}'"
    return match.group(1)


def _blocks(text: str, language: str = "bash") -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def _commands(block: str) -> list[str]:
    """The block's command lines, a backslash continuation joined to its line."""
    joined = block.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def _newcomer_env() -> dict[str, str]:
    # The scripts of the venv this suite runs in, as if it were activated (not activated: .ci/run's way).
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_CURRENT_TEST", None)
    # Kept cheap: the controls and two families, chosen the documented way (pytest reads this itself),
    # so the README's run line is run exactly as it is written.
    env["PYTEST_ADDOPTS"] = "-k 'control or REPLAY or CONSENT-001'"
    return env


def test_the_readme_audits_a_reference_server_from_its_own_commands(tmp_path: Path) -> None:
    (block,) = _blocks(_section("Audit your own server"))
    commands = _commands(block)
    assert [c.split()[:2] for c in commands[:2]] == [
        ["mcp-confirm-audit", "init"],
        ["mcp-confirm-audit", "run"],
    ], "three commands: init, run, then read the review"
    # A newcomer's folder beside a clone: the block names the reference server as $PWD/targets/...
    (tmp_path / "targets").symlink_to(REPO / "targets", target_is_directory=True)
    env = _newcomer_env()
    codes = []
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        codes.append(done.returncode)
        last = done
    init, run, read = codes
    assert init == 0
    assert run in AUDITED, f"run exited {run}, which the README does not document for an audit"
    assert read == 0
    profile = (tmp_path / "my-server.yaml").read_text()
    assert "targets/reference/server.py" in profile
    assert "tool: delete_file" in profile
    reports = tmp_path / "mcp-audit"
    assert {p.name for p in reports.iterdir()} >= {"audit.json", "review.md", "audit.sarif"}
    assert last.stdout.startswith("# Security review: `mcp-confirm-reference`")
    assert "## Summary" in last.stdout


def test_the_readmes_test_suite_command_is_the_one_ci_runs() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    (ci_pytest,) = [line for line in ci.splitlines() if "-m pytest" in line]
    ci_args = shlex.split(ci_pytest)[1:]
    (_, suite) = _blocks(_section("The two commands"))
    (readme_line,) = _commands(suite)
    readme_pytest = readme_line.split("&&")[-1]
    assert shlex.split(readme_pytest)[1:] == ci_args, "README and .ci/run run the suite the same way"
    assert "pip install -e '.[dev]'" in readme_line


def test_the_readmes_demo_command_regenerates_the_checked_in_review() -> None:
    (demo, _) = _blocks(_section("The two commands"))
    run = _commands(demo)[-1]
    assert run == "mcp-confirm-audit run --profile targets/mcp-confirm.yaml --report-dir reports/mcp-confirm"
    assert (REPO / "targets" / "mcp-confirm.yaml").is_file()
    assert (REPO / "reports" / "mcp-confirm" / "review.md").is_file()


def test_every_relative_link_of_the_readme_resolves() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    relative = [link for link in links if "://" not in link]
    assert relative, "the README links into the docs"
    missing = [link for link in relative if not (REPO / link).exists()]
    assert missing == []


def test_the_readme_fits_on_a_screen_or_two() -> None:
    # One screen of prose and commands; the rest lives in docs/.
    assert len(README.splitlines()) <= 120
