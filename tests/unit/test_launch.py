"""A target served over HTTP that the harness starts: on a free port, waited for, stopped with children."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import anyio
import pytest
from deadline import deadline

from mcp_confirm_audit.errors import TargetError
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target.launch import serve_http

pytestmark = pytest.mark.anyio

# Listens on the port it is given, and leaves a child process behind that
# writes its pid where the test can find it.
LISTENER = """
import socket, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(sys.argv[2], "w").write(str(child.pid))
server = socket.socket()
server.bind(("127.0.0.1", int(sys.argv[1])))
server.listen()
while True:
    conn, _ = server.accept()
    conn.close()
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def command(*words: str) -> str:
    return shlex.join([sys.executable, *words])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it no longer runs.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(") ", 1)[1][0] != "Z"


async def test_the_target_is_reached_on_its_port_and_its_whole_group_is_stopped(tmp_path: Path) -> None:
    script, pidfile = tmp_path / "listener.py", tmp_path / "child.pid"
    script.write_text(LISTENER)
    profile = Profile(command=command(str(script), "{port}", str(pidfile)))
    async with serve_http(profile, tmp_path, os.environ, tmp_path / "log") as url:
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/mcp")
        child = int(pidfile.read_text())
        assert alive(child)
    with anyio.fail_after(deadline(10)):
        while alive(child):
            await anyio.sleep(0.05)


async def test_a_target_that_exits_before_listening_is_one_line_with_its_output(tmp_path: Path) -> None:
    profile = Profile(
        command=command("-c", "import sys; print('no port for me', file=sys.stderr); sys.exit(4)")
    )
    with pytest.raises(TargetError, match=r"exited with status 4 before it listened.*no port for me"):
        async with serve_http(profile, tmp_path, os.environ, tmp_path / "log"):
            pass


async def test_a_target_that_never_listens_is_given_up_on_at_the_start_timeout(tmp_path: Path) -> None:
    profile = Profile(command=command("-c", "import time; time.sleep(600)"), start_timeout=0.5)
    with pytest.raises(TargetError, match=r"did not listen on 127\.0\.0\.1:\d+ within 0\.5s"):
        async with serve_http(profile, tmp_path, os.environ, tmp_path / "log"):
            pass
