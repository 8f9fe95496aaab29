"""An inotify instance costs no new process to open and no wait to close, and is closed all the same."""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from deadline import deadline

from mcp_confirm_audit.oracle import inotify


def test_the_c_library_is_looked_up_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # `find_library` runs `ldconfig -p` in a process of its own: once a process, not once an instance.
    looked: list[str] = []
    real = ctypes.util.find_library
    monkeypatch.setattr(ctypes.util, "find_library", lambda name: looked.append(name) or real(name))
    inotify._c_library.cache_clear()
    watchers = [inotify.Watcher() for _ in range(3)]
    watch = inotify.FileWatch(str(tmp_path))
    for instance in (*watchers, watch):
        instance.close()
    assert looked == ["c"]


def test_a_closed_instance_is_closed(tmp_path: Path) -> None:
    watcher = inotify.Watcher()
    watcher.watch("root", str(tmp_path))
    fd = watcher._opened()
    watcher.close()
    for thread in threading.enumerate():
        if thread.name == "mcp-audit-inotify-close":
            thread.join()
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(fd)
    watcher.close()  # closed once: a second close does nothing


@pytest.mark.slow  # starts a Python process
def test_an_instance_still_open_when_the_interpreter_ends_does_not_keep_the_process(tmp_path: Path) -> None:
    # Dropped at exit, it is closed where it is: a closing thread started then would never run.
    script = (
        "from mcp_confirm_audit.oracle import inotify\n"
        f"watcher = inotify.Watcher()\nwatcher.watch('root', {str(tmp_path)!r})\n"
        f"watch = inotify.FileWatch({str(tmp_path)!r})\n"
    )
    done = subprocess.run([sys.executable, "-c", script], timeout=deadline(20), check=False)
    assert done.returncode == 0
