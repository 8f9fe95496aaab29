"""Reading a Markdown page's code blocks and running its commands as a newcomer would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from deadline import deadline

REPO = Path(__file__).resolve().parents[2]


def section(page: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", page, flags=re.DOTALL | re.MULTILINE)
    assert match, f"the page has a section '## {title}'"
    return match.group(1)


def blocks(text: str, language: str = "bash") -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def commands(block: str) -> list[str]:
    """The block's command lines, a backslash continuation joined to its line."""
    joined = block.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def newcomer_env(selection: str) -> dict[str, str]:
    """The environment of a person in a folder beside a clone, with the suite's venv as if activated."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_CURRENT_TEST", None)
    # Kept cheap: the attacks chosen the documented way (pytest reads this variable itself),
    # so each command line is run exactly as it is written.
    env["PYTEST_ADDOPTS"] = f"-k '{selection}'"
    return env


def newcomer_folder(tmp_path: Path) -> Path:
    """A folder of one's own whose `targets/` is the clone's, as a page's `$PWD/targets/...` expects."""
    (tmp_path / "targets").symlink_to(REPO / "targets", target_is_directory=True)
    return tmp_path


def run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(300),
        check=False,
    )
