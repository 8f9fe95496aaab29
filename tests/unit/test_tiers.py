"""The two tiers (tests/README.md): every folder is in one, and CI runs both."""

from __future__ import annotations

import shlex
import tomllib

from tiers import FAST_FOLDERS, SLOW_FOLDERS, TESTS

ROOT = TESTS.parent


def test_every_test_folder_is_in_a_tier() -> None:
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and any(p.glob("test_*.py"))}
    assert folders - SLOW_FOLDERS - FAST_FOLDERS == set(), "list the new folder in tests/tiers.py"
    assert not SLOW_FOLDERS & FAST_FOLDERS


def test_pytest_alone_runs_the_fast_tier_and_ci_runs_every_tier() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    addopts = config["addopts"]
    assert addopts[addopts.index("-m") + 1] == "not slow"
    pytest_lines = [
        shlex.split(line) for line in (ROOT / ".ci" / "run").read_text().splitlines() if " pytest " in line
    ]
    assert pytest_lines, ".ci/run runs no pytest"
    for words in pytest_lines:
        marks = [
            words[i + 1] for i, word in enumerate(words[:-1]) if word == "-m" and words[i + 1] != "pytest"
        ]
        assert marks == [""], f"CI must run every tier: {shlex.join(words)}"


def test_every_test_module_has_a_basename_of_its_own() -> None:
    # The test folders are not packages: two modules of one name in two folders fail collection
    # ("import file mismatch") in pytest's default import mode, and only where both are collected.
    # Hidden folders are not collected (pytest's norecursedirs): the old SDK's cached venv lives in one.
    names = sorted(
        path.name
        for path in TESTS.rglob("test_*.py")
        if not any(part.startswith(".") for part in path.relative_to(TESTS).parts)
    )
    twice = sorted({name for name in names if names.count(name) > 1})
    assert twice == [], f"rename one of each: {twice}"
