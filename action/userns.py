"""Let the target be confined on a hosted Ubuntu runner: lift AppArmor's restriction of user namespaces.

The target runs in user, mount, PID and network namespaces of its own (target/confine.py), which
needs unprivileged user namespaces. Ubuntu 23.10 and later (the ubuntu-24.04 runner, ubuntu-latest)
restrict them with AppArmor: `kernel.apparmor_restrict_unprivileged_userns = 1` makes `unshare`
fail with "Operation not permitted" (actions/runner-images#10443). The runner's VM belongs to this
job alone, so the restriction is lifted there with sudo. Where the knob does not exist (ubuntu-22.04,
a self-hosted runner elsewhere) or is already 0, nothing is done. This step never fails the job: a
run that still cannot confine says so in its first lines and in the review's head.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

KNOB = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


def command(knob: Path = KNOB) -> list[str] | None:
    """The command that lifts the restriction, or None when there is none to lift."""
    try:
        restricted = knob.read_text().strip() == "1"
    except OSError:
        return None
    if not restricted:
        return None
    sudo = [] if shutil.which("sudo") is None else ["sudo", "-n"]
    return [*sudo, "sysctl", "-w", "kernel.apparmor_restrict_unprivileged_userns=0"]


def main() -> int:
    lift = command()
    if lift is None:
        print("user namespaces: not restricted by AppArmor here; nothing to do")
        return 0
    done = subprocess.run(lift, capture_output=True, text=True, check=False)
    said = (done.stdout + done.stderr).strip()
    if done.returncode == 0:
        print(f"user namespaces: AppArmor's restriction lifted for the target's confinement ({said})")
    else:
        print(f"user namespaces: could not lift AppArmor's restriction ({said}); the audit says how it runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
