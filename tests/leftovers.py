"""What a target leaves behind: the tests' one reading of /proc (hostile targets, a fleet stopped by --timeout)."""

from __future__ import annotations

import os
from pathlib import Path

NUL = b"\0"


def survivors(marker: str) -> list[str]:
    """Live processes (not zombies) whose command line carries the marker."""
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            alive.append(f"{pid}: {cmdline.replace(NUL, b' ').decode(errors='replace')}")
    return alive
