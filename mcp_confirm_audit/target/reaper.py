"""Leave no process behind: find every process a target started, and kill it.

The SDK starts a stdio target as the leader of a new session and, when the
target will not exit after its stdin closes, kills that process group. That
misses two kinds of survivor: children of a target that exited by itself
(the group is never signalled), and descendants that left the group with
setsid(), like any daemon. So every target is started with a marker in its
environment, which its descendants inherit, and after the SDK has closed the
connection every process still carrying the marker is killed, together with
its process group. At the end of a session, anything still working inside
the sandbox (its current directory there) goes too.

What cannot be found this way: a descendant that clears its environment AND
leaves the sandbox directory AND leaves the process group. Catching that
needs a cgroup or a container around the target; run hostile servers in one.
Linux only: elsewhere /proc does not exist and only the SDK's group kill runs.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio

MARKER_VARIABLE = "MCP_AUDIT_PROCESS"
# Every marker this process gave a target: what a last-resort cleanup looks for.
ISSUED: set[str] = set()
_PROC = Path("/proc")


def _pids() -> Iterator[int]:
    try:
        names = os.listdir(_PROC)
    except OSError:
        return
    me = os.getpid()
    for name in names:
        if name.isdigit() and int(name) != me:
            yield int(name)


def marked(token: str) -> list[int]:
    """Processes whose environment carries MCP_AUDIT_PROCESS=token (our own user's only)."""
    needle = f"{MARKER_VARIABLE}={token}".encode()
    found = []
    for pid in _pids():
        try:
            # A plain path, not a Path: this runs over every process on the machine at each close.
            with open(f"{_PROC}/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:  # gone, a zombie, or another user's
            continue
        if needle in environ and needle in environ.split(b"\0"):
            found.append(pid)
    return found


def working_in(directory: Path) -> list[int]:
    """Processes whose current directory is inside `directory`."""
    inside = str(directory.resolve())
    below = inside + os.sep
    found = []
    for pid in _pids():
        try:
            cwd = os.readlink(f"{_PROC}/{pid}/cwd")
        except OSError:
            continue
        if cwd == inside or cwd.startswith(below):
            found.append(pid)
    return found


def _kill(pids: list[int]) -> None:
    ours = os.getpgid(0)
    for pid in pids:
        try:
            group = os.getpgid(pid)
            if group != ours:
                # The whole group: members that scrubbed their environment too.
                os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue


def kill_now(find: Callable[[], list[int]], timeout: float = 2.0) -> None:
    """SIGKILL whatever `find` returns until it returns nothing (blocking; for timer threads)."""
    deadline = time.monotonic() + timeout
    while (pids := find()) and time.monotonic() < deadline:
        _kill(pids)
        time.sleep(0.01)  # a process being killed can still fork once: look again


async def kill_all(find: Callable[[], list[int]], timeout: float = 2.0) -> None:
    """SIGKILL whatever `find` returns until it returns nothing."""
    with anyio.move_on_after(timeout):
        while pids := find():
            _kill(pids)
            await anyio.sleep(0.01)


class TargetProcesses:
    """Every process of one stdio target: the ones carrying its marker.

    `kill_after` arms a timer thread, so a deadline holds even while the
    event loop is waiting inside the SDK (a start-up that never answers, a
    shutdown that waits for a process that will not exit).
    """

    def __init__(self, token: str) -> None:
        self.token = token
        ISSUED.add(token)
        self.fired = False
        self._timer: threading.Timer | None = None

    def find(self) -> list[int]:
        return marked(self.token)

    def kill_after(self, seconds: float) -> None:
        self.cancel()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        kill_now(self.find)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def kill(self) -> None:
        self.cancel()
        # Also when the caller is being cancelled (a start-up past its deadline).
        with anyio.CancelScope(shield=True):
            await kill_all(self.find)


def kill_every_target() -> None:
    """Last resort (a run being stopped): SIGKILL every process carrying a marker this process issued."""
    for token in list(ISSUED):
        kill_now(functools.partial(marked, token))
