"""`zygote:`: a Python target's modules imported once, each of its processes forked from there.

Over stdio a Python server pays for its imports at every start (the SDK alone is most of a
second of CPU), and `isolation: process` starts one per attack. With `zygote: [modules]` the
session starts one parent process on the target's own interpreter that imports them and then
waits (`zygote_main.py serve`). Every process of the target is still started by the launcher
(`driver.connect`, the SDK's stdio client, the reaper's marker, the stderr log, the world's root
as its directory): what it starts is a small relay (`zygote_main.py relay`, the standard library
only), which hands its stdin, stdout, stderr, environment and directory to the zygote; the zygote
forks a child that takes them over and runs the command as `python SCRIPT ...` or `python -m
MODULE ...` would. So each world still gets a process nobody used before; only the imports are
shared, as they were when they were read from disk.
"""

from __future__ import annotations

import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from contextlib import suppress
from pathlib import Path

from ..errors import TargetError, UsageError
from . import reaper

_SCRIPT = str(Path(__file__).with_name("zygote_main.py"))
# Mirrors zygote_main.SLOT / SLOT_SIZE (that script imports nothing of ours).
_SLOT, _SLOT_SIZE = "MCP_AUDIT_MARKER_SLOT", 240
# Seconds the zygote has to stop (killing its children) before it is killed.
_GRACE = 2.0


def split_command(argv: Sequence[str]) -> tuple[str, list[str]]:
    """(interpreter, what follows it) of `python SCRIPT ARGS...` or `python -m MODULE ARGS...`.

    Raises UsageError for any other shape (interpreter options, `-c`, a console script).
    """
    if len(argv) >= 2 and ((argv[1] == "-m" and len(argv) >= 3) or not argv[1].startswith("-")):
        return argv[0], list(argv[1:])
    shown = " ".join(argv[:3])
    raise UsageError(
        f"zygote: needs a command of the form 'python SCRIPT ...' or 'python -m MODULE ...', not {shown!r}; "
        "remove zygote: from the profile, or start the server that way"
    )


class Zygote:
    """The zygote of one session's target, started on its interpreter with the profile's environment."""

    def __init__(
        self, interpreter: str, modules: Sequence[str], env: Mapping[str, str], timeout: float
    ) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="mcp-zygote-"))
        self.socket = str(self.directory / "zygote.sock")
        self.token = f"{self.directory.name}/zygote"
        self._log = self.directory / "zygote.stderr"
        self._process: subprocess.Popen[bytes] | None = None
        try:
            self._start(interpreter, modules, env, timeout)
        except BaseException:
            self.close()
            raise

    def _start(
        self, interpreter: str, modules: Sequence[str], env: Mapping[str, str], timeout: float
    ) -> None:
        if shutil.which(interpreter) is None:
            raise TargetError(
                f"target command {interpreter!r} was not found on PATH; install it or give its full path"
            )
        reaper.ISSUED.add(self.token)
        started = {**env, reaper.MARKER_VARIABLE: self.token, _SLOT: " " * _SLOT_SIZE}
        with self._log.open("w") as log:
            self._process = subprocess.Popen(
                [interpreter, _SCRIPT, "serve", self.socket, *modules],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=started,
                cwd=self.directory,
                start_new_session=True,
            )
        assert self._process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout) and self._process.stdout.readline() == b"ready\n"
        if not ready:
            tail = " | ".join(self._log.read_text(errors="replace").strip().splitlines()[-3:])[:600]
            raise TargetError(
                f"the zygote of {interpreter!r} (importing {', '.join(modules) or 'nothing'}) did not start "
                f"within {timeout:g}s"
                + (f" (stderr: {tail})" if tail else "")
                + "; check the modules import in the target's environment, or remove zygote: from the profile"
            )

    def relayed(self, interpreter_and_rest: Sequence[str]) -> list[str]:
        """The command the launcher starts instead of `python REST...`: the relay, which the zygote forks for."""
        _, rest = split_command(interpreter_and_rest)
        # The harness's own interpreter, isolated and without site: only the standard library, quickly.
        return [sys.executable, "-I", "-S", _SCRIPT, "relay", self.socket, *rest]

    def close(self) -> None:
        """Stop the zygote (it kills every child it forked), then anything still carrying its marker."""
        process, self._process = self._process, None
        if process is not None:
            with suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=_GRACE)
            except subprocess.TimeoutExpired:
                with suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        reaper.kill_now(lambda: reaper.marked(self.token))
        shutil.rmtree(self.directory, ignore_errors=True)

    @property
    def running(self) -> bool:
        """Whether the zygote is still there to fork from (a target's child may have killed it)."""
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None
