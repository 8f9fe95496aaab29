"""The README, as a person who never saw the project reads it: its own code blocks, run as written.

A newcomer with a clone runs the "Audit your own server" block in a folder of their own and gets a
review of a reference server; the test-suite command is the one `.ci/run` runs; every link resolves.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from markdown_blocks import REPO, blocks, commands, newcomer_env, newcomer_folder, run, section

README = (REPO / "README.md").read_text(encoding="utf-8")
# The exit codes the README documents for an audit that ran: 0 nothing found, 1 findings.
AUDITED = {int(pytest.ExitCode.OK), int(pytest.ExitCode.TESTS_FAILED)}


def test_the_readme_audits_a_reference_server_from_its_own_commands(tmp_path: Path) -> None:
    (block,) = blocks(section(README, "Audit your own server"))
    lines = commands(block)
    assert [c.split()[:2] for c in lines[:2]] == [
        ["mcp-confirm-audit", "init"],
        ["mcp-confirm-audit", "run"],
    ], "three commands: init, run, then read the review"
    here = newcomer_folder(tmp_path)
    # The controls and one attack: an audit that judged something, its reports written.
    env = newcomer_env("control or MCA-REPLAY-001")
    init, audit, read = (run(line, here, env) for line in lines)
    assert init.returncode == 0, init.stderr
    assert audit.returncode in AUDITED, f"run exited {audit.returncode}, undocumented for an audit"
    assert read.returncode == 0
    profile = (here / "my-server.yaml").read_text()
    assert "targets/reference/server.py" in profile
    assert "tool: delete_file" in profile
    assert {p.name for p in (here / "mcp-audit").iterdir()} >= {"audit.json", "review.md", "audit.sarif"}
    assert read.stdout.startswith("# Security review: `mcp-confirm-reference`")
    assert "## Summary" in read.stdout


def test_the_readmes_test_suite_command_runs_what_ci_runs() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    lines = ci.splitlines()
    (ci_pytest,) = [line for line in lines if "-m pytest" in line]
    (_, suite) = blocks(section(README, "The two commands"))
    (readme_line,) = commands(suite)
    readme_pytest = readme_line.split("&&")[-1]
    # CI leaves out of this run only what it runs right after beside two CPU burners: the same tests.
    words = [word for word in shlex.split(ci_pytest) if word != "${deselect[@]}"]
    assert shlex.split(readme_pytest)[1:] == words[1:], "README and .ci/run agree"
    assert any("under_load.sh list all" in line and "--deselect" in line for line in lines)
    (loaded,) = [line for line in lines if "under_load.sh all" in line and not line.startswith("#")]
    assert lines.index(loaded) > lines.index(ci_pytest)
    assert "pip install -e '.[dev]'" in readme_line


def test_the_readmes_demo_command_regenerates_the_checked_in_review() -> None:
    (demo, _) = blocks(section(README, "The two commands"))
    audit = commands(demo)[-1]
    assert (
        audit == "mcp-confirm-audit run --profile targets/mcp-confirm.yaml --report-dir reports/mcp-confirm"
    )
    assert (REPO / "targets" / "mcp-confirm.yaml").is_file()
    assert (REPO / "reports" / "mcp-confirm" / "review.md").is_file()


def test_every_relative_link_of_the_readme_resolves() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    relative = [link for link in links if "://" not in link]
    assert relative, "the README links into the docs"
    assert [link for link in relative if not (REPO / link).exists()] == []


def test_the_readme_fits_on_a_screen_or_two() -> None:
    # One screen of prose and commands; the rest lives in docs/.
    assert len(README.splitlines()) <= 120
