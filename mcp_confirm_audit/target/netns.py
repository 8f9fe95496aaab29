"""The run's one network namespace with loopback only, shared by the targets, the sink and the fakes.

A confined target that must meet the harness on loopback (it serves HTTP, it sends to the sink,
it is one of `servers:`, it is given a fake's loopback address) joins this namespace instead of
the host's network. `netns_main.py`, started once per harness process, holds it and relays the
ports the harness names between the two loopbacks: the port an HTTP target serves on is reached
from the harness at the same address (`forward`), the sink's and a fake's port from inside
(`reverse`). Nothing else is reachable from the namespace: no other interface, no route out.

The relay reads its commands on its standard input: when the harness is gone, even killed with
SIGKILL, it reads the end of it and ends, and its namespace with it.
"""

from __future__ import annotations

import atexit
import subprocess
import sys
import threading
from pathlib import Path

SCRIPT = str(Path(__file__).with_name("netns_main.py"))


class SharedNet:
    """The relay process and its namespace's holder (`pid`, whose /proc/PID/ns/ a target joins)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,
        )
        said = self._read()
        if not said.startswith("ready "):
            self.close()
            raise OSError(said.removeprefix("error: ") or "the network namespace's relay did not start")
        self.pid = int(said.split()[1])

    @property
    def running(self) -> bool:
        return self._process.poll() is None

    def _read(self) -> str:
        assert self._process.stdout is not None
        return self._process.stdout.readline().strip()

    def _ask(self, verb: str, port: int) -> str:
        assert self._process.stdin is not None
        with self._lock:
            try:
                self._process.stdin.write(f"{verb} {port}\n")
                self._process.stdin.flush()
            except OSError:
                return "error: the network namespace's relay is gone"
            return self._read() or "error: the network namespace's relay is gone"

    def _done(self, verb: str, port: int) -> None:
        said = self._ask(verb, port)
        if said != "ok":
            raise OSError(f"{verb} 127.0.0.1:{port} with the target's network namespace: {said}")

    def forward(self, port: int) -> None:
        """The harness's 127.0.0.1:`port` reaches the namespace's (an HTTP target's port)."""
        self._done("forward", port)

    def reverse(self, port: int) -> None:
        """The namespace's 127.0.0.1:`port` reaches the harness's (the sink's, a fake's port)."""
        self._done("reverse", port)

    def listening(self, port: int) -> bool:
        """Whether something in the namespace accepts on 127.0.0.1:`port`."""
        return self._ask("check", port) == "ok"

    def release(self, port: int) -> None:
        """Stop relaying `port`, either way."""
        self._ask("close", port)

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._process.stdout is not None:
            self._process.stdout.close()


_lock = threading.Lock()
_shared: SharedNet | None = None


def shared() -> SharedNet:
    """This harness process's shared namespace, started the first time (again if its relay is gone)."""
    global _shared
    with _lock:
        if _shared is None or not _shared.running:
            if _shared is None:
                # Ended as the harness exits, not left to the garbage collector (a warning of a
                # process still running, its pipes unclosed, at the end of every worker that used it).
                atexit.register(_close_shared)
            _shared = SharedNet()
        return _shared


def _close_shared() -> None:
    with _lock:
        if _shared is not None:
            _shared.close()
