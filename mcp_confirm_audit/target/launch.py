"""Targets served over Streamable HTTP that the harness starts itself.

A command with `{port}` is started on a free loopback port in a process group
of its own, its output goes to the sandbox's log folder, and the harness waits
until something accepts a connection on that port (bounded by the profile's
start timeout). At the end the whole group is stopped: nothing outlives the run.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path

import anyio
import anyio.to_thread

from ..errors import TargetError
from ..profile import headers as http_headers
from ..profile.loader import Profile
from .confine_main import EXITED
from .netns import SharedNet

# Seconds a server has to exit after SIGTERM before its group is killed.
_GRACE = 3.0
# Between two attempts to connect while a server starts: start-up only, never per attack.
_POLL = 0.05
# Ports to try when the one picked is taken before the target binds it.
_ATTEMPTS = 3


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@asynccontextmanager
async def serve_http(
    profile: Profile,
    root: Path,
    env: Mapping[str, str],
    log: Path,
    *,
    wrap: Callable[[list[str]], list[str]] | None = None,
    net: SharedNet | None = None,
) -> AsyncIterator[str]:
    """Start the target on a free port; yield its URL once it accepts connections.

    `wrap` puts the command inside another that starts it (on a terminal of its own, `tty: true`).
    `net`: the target listens in the run's shared network namespace, reached through its relay.
    """
    for attempt in range(_ATTEMPTS):
        port = free_port()
        argv = profile.argv(root, port)
        if shutil.which(argv[0]) is None:
            missing = f"target command {argv[0]!r} was not found on PATH"
            raise TargetError(f"{missing}; install it or give its full path")
        with log.open("w") as out:
            process = subprocess.Popen(
                wrap(argv) if wrap is not None else argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                # `{port}` in env: the port it serves on, as in its command.
                env={k: v.replace("{port}", str(port)) for k, v in env.items()},
                cwd=root,
                start_new_session=True,
            )
        try:
            await _wait_until_listening(process, port, profile.start_timeout, log, profile.secrets(), net)
            if net is not None:
                await anyio.to_thread.run_sync(net.forward, port)
        except (TargetError, OSError) as exc:
            if net is not None:
                await anyio.to_thread.run_sync(net.release, port)
            if not isinstance(exc, TargetError):
                # The port is taken on the harness's side: stop, and try another.
                await anyio.to_thread.run_sync(stop, process)
                if attempt + 1 < _ATTEMPTS:
                    continue
                raise TargetError(f"the target's port could not be reached from the harness: {exc}") from exc
            await anyio.to_thread.run_sync(stop, process)
            # Another program took the port between our look and the target's bind: try another.
            if attempt + 1 < _ATTEMPTS and "in use" in log.read_text(errors="replace"):
                continue
            raise
        try:
            yield profile.url.replace("{port}", str(port))
        finally:
            await anyio.to_thread.run_sync(stop, process)
            if net is not None:
                await anyio.to_thread.run_sync(net.release, port)
        return


async def _wait_until_listening(
    process: subprocess.Popen[bytes],
    port: int,
    timeout: float,
    log: Path,
    secrets: tuple[str, ...] = (),
    net: SharedNet | None = None,
) -> None:
    with anyio.move_on_after(timeout):
        while process.poll() is None:
            if net is not None:
                if await anyio.to_thread.run_sync(net.listening, port):
                    return
                await anyio.sleep(_POLL)
                continue
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(_POLL)
                continue
            await stream.aclose()
            return
        raise TargetError(
            f"the target exited with status {process.returncode} before it listened{_tail(log, secrets)}"
        )
    raise TargetError(
        f"the target did not listen on 127.0.0.1:{port} within {timeout:g}s{_tail(log, secrets)}; check it starts "
        "by hand with {port} replaced, or raise start_timeout in the profile"
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left of it."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=_GRACE)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; make sure nothing else of its group stays behind.
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        return


def _tail(log: Path, secrets: tuple[str, ...] = ()) -> str:
    try:
        lines = http_headers.scrub_values(log.read_text(errors="replace"), secrets).strip().splitlines()
    except OSError:
        return ""
    # The init's line of the status is said by the message itself, which reads it from the process.
    said = [line for line in lines if not line.startswith(EXITED)]
    tail = " | ".join(line.strip() for line in said[-3:])[:600]
    return f" (output: {tail})" if tail else ""
