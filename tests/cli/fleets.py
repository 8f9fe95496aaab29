"""The fleet the fleet tests share (test_fleet.py, test_fleet_watch.py), run once by `fleet_run`.

Five targets, two at a time, each with the controls and one attack (the fleet is the point, not
the catalogue): the careful reference server, its no-ledger flaw, the PyPI server mcp-confirm, the
reference server in process (a profile beside FLEET.yaml, named by a path relative to it), and one
that cannot start. FLEET.yaml sits in a subfolder (ci/), as a repository keeps it. (The own-ledger
style was a seventh, and the payments server's handle profile a sixth: a second command target and
a third profile target judged clean as `careful` and `in-process` are, each a process of the CLI and
of its server more; the matrices and tests/docs/ audit those servers.)
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "targets" / "reference" / "server.py"
# Given as one string (split as a shell would) for most targets, as a list for the others.
ONE_ATTACK = "-k 'control or MCA-REPLAY-001'"
NAMES = ["careful", "no-ledger", "mcp-confirm", "in-process", "never-starts"]


def reference(*options: str) -> str:
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


def write_fleet(folder: Path) -> Path:
    """ci/FLEET.yaml in `folder`, naming a profile beside it (ci/targets/in-process.yaml) by a relative path."""
    (folder / "ci" / "targets").mkdir(parents=True)
    profile = (REPO / "targets" / "reference-in-process.yaml").read_text()
    (folder / "ci" / "targets" / "in-process.yaml").write_text(
        profile.replace("{profile_dir}/reference", str(REPO / "targets" / "reference"))
    )
    fleet = {
        "targets": [
            {"name": "careful", "command": reference(), "args": ONE_ATTACK},
            {"name": "no-ledger", "command": reference("--flaw", "no-ledger"), "args": ONE_ATTACK},
            {
                "name": "mcp-confirm",
                "profile": str(REPO / "targets" / "mcp-confirm.yaml"),
                "args": ONE_ATTACK,
            },
            {"name": "in-process", "profile": "targets/in-process.yaml", "args": shlex.split(ONE_ATTACK)},
            {"name": "never-starts", "command": "no-such-mcp-server-anywhere --root {root}"},
        ]
    }
    path = folder / "ci" / "FLEET.yaml"
    path.write_text(yaml.safe_dump(fleet, sort_keys=False))
    return path


def cli(cwd: Path, *argv: str, timeout: float = 1500) -> subprocess.CompletedProcess[str]:
    """`mcp-confirm-audit ARGV...` as a person runs it, from `cwd`."""
    return subprocess.run(
        [sys.executable, "-m", "mcp_confirm_audit.cli.main", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
