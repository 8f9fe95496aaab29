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

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import suppress
from pathlib import Path

from ..errors import TargetError, UsageError
from ..oracle.sandbox import mark_owner, sweep
from . import confine, reaper

_SCRIPT = str(Path(__file__).with_name("zygote_main.py"))
# Mirrors zygote_main.SLOT / SLOT_SIZE (that script imports nothing of ours).
_SLOT, _SLOT_SIZE = "MCP_AUDIT_MARKER_SLOT", 240
_PREFIX = "mcp-zygote-"
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
        self,
        interpreter: str,
        modules: Sequence[str],
        env: Mapping[str, str],
        timeout: float,
        confined: confine.Confined | None = None,
    ) -> None:
        self.interpreter = interpreter
        # A zygote's folder left by a run killed outright is removed by the next one (its owner is gone).
        sweep(None, _PREFIX)
        self.directory = Path(tempfile.mkdtemp(prefix=_PREFIX))
        mark_owner(self.directory)
        self.socket = str(self.directory / "zygote.sock")
        self.token = f"{self.directory.name}/zygote"
        self._log = self.directory / "zygote.stderr"
        self._process: subprocess.Popen[bytes] | None = None
        # The regime the zygote (and so every process forked from it) runs in, and where its worlds are made.
        self._confined = confined
        # Kept by `keep_zygotes` for later audits: a caller releases it instead of stopping it.
        self.kept = False
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
            argv = [interpreter, _SCRIPT, "serve", self.socket, *modules]
            if self._confined is not None:
                regime, worlds, forks = self._confined
                argv = confine.wrap(regime, argv, self.directory, self.directory, writable=worlds, also=forks)
            self._process = subprocess.Popen(
                argv,
                # Held open and never written: the zygote exits when it reads end of file (we are gone).
                stdin=subprocess.PIPE,
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

    def forks(self, argv: Sequence[str]) -> bool:
        """Whether `argv` is `python SCRIPT ...` or `python -m MODULE ...` on this zygote's interpreter."""
        try:
            interpreter, _ = split_command(argv)
        except UsageError:
            return False
        return interpreter == self.interpreter

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
            for pipe in (process.stdin, process.stdout):
                if pipe is not None:
                    pipe.close()
        reaper.kill_now(lambda: reaper.marked(self.token))
        shutil.rmtree(self.directory, ignore_errors=True)

    @property
    def running(self) -> bool:
        """Whether the zygote is still there to fork from (a target's child may have killed it)."""
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None


# Kept zygotes, by what decides the modules they imported; None while nothing keeps them.
_kept: dict[tuple[object, ...], Zygote] | None = None
_kept_lock = threading.Lock()


def _imports_key(
    interpreter: str, modules: Sequence[str], env: Mapping[str, str], own: Mapping[str, str]
) -> tuple[object, ...]:
    """What an import can depend on: the interpreter, the modules, Python's variables and the profile's own."""
    python = {name: value for name, value in env.items() if name.startswith("PYTHON")}
    return interpreter, tuple(modules), tuple(sorted({**python, **own}.items()))


def _confinement_key(confined: confine.Confined | None) -> object:
    """What a zygote's confinement is made of: its regime, its worlds' folders and what its forks must see.

    The forks' own arguments (`--flaw X`, a port) are not in it: a zygote confined for one command
    sees the interpreter and the scripts of another that names the same paths, so one zygote serves
    every audit of a script however it is started (a matrix's hundreds of audits), instead of one each.
    A word with `..` is kept as it is: from the zygote's own directory it may name a path outside it.
    """
    if confined is None:
        return None
    regime, worlds, forks = confined
    paths = sorted({path for argv in forks for path in confine.needed_by(argv)})
    relative = sorted({word for argv in forks for word in argv[1:] if ".." in word})
    # The regime's `why` only says why (a peer's port, say): what confines is these three.
    return (regime.confined, regime.net, regime.shared), worlds, tuple(paths), tuple(relative)


@contextlib.contextmanager
def keep_zygotes(keep: bool = True) -> Iterator[None]:
    """While open, audits in this process share a zygote for the same imports instead of one each.

    For a caller that runs many audits of Python targets in one process (a test suite, a registry
    going through its servers): each audit's zygote costs an import of the SDK (about a second of
    CPU). Sharing changes nothing a target sees: each process is still forked fresh from a parent
    that only imported modules, takes over its own relay's stdin, stdout, environment and root, and
    is killed with its audit. Every kept zygote is stopped when the outermost one closes.
    `keep_zygotes(False)` gives each audit its own again while it is open.
    """
    global _kept
    with _kept_lock:
        outer = _kept
        _kept = ({} if outer is None else outer) if keep else None
    try:
        yield
    finally:
        with _kept_lock:
            mine, _kept = _kept, outer
        if keep and outer is None:
            for zygote in (mine or {}).values():
                zygote.close()


def open_zygote(
    interpreter: str,
    modules: Sequence[str],
    env: Mapping[str, str],
    timeout: float,
    own_env: Mapping[str, str] | None = None,
    confined: confine.Confined | None = None,
) -> Zygote:
    """A zygote for these imports: a kept one if `keep_zygotes` is open, else a new one for the caller alone."""
    with _kept_lock:
        if _kept is None:
            return Zygote(interpreter, modules, env, timeout, confined)
        key = (*_imports_key(interpreter, modules, env, own_env or {}), _confinement_key(confined))
        zygote = _kept.get(key)
        if zygote is None or not zygote.running:
            if zygote is not None:
                zygote.close()
            zygote = _kept[key] = Zygote(interpreter, modules, env, timeout, confined)
        zygote.kept = True
        return zygote


def release_zygote(zygote: Zygote) -> None:
    """The caller is done with it: stopped, unless `keep_zygotes` keeps it for the next audit."""
    if not zygote.kept:
        zygote.close()
