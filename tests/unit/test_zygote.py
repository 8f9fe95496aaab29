"""`zygote:`: every process of a Python target forked from one parent that imported its modules.

What must hold is what holds without it: each world gets a process nobody used before, in its
own root, carrying its own marker; the relay the launcher starts stands for the child (its
stdio, its exit status, its death); and nothing is left once the zygote is closed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from deadline import deadline

from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target import reaper
from mcp_confirm_audit.target.driver import connect
from mcp_confirm_audit.target.zygote import Zygote, split_command

REFERENCE = Path(__file__).parents[2] / "targets" / "reference" / "server.py"

# Echoes a line of its stdin with what it is, then exits with the status it was given.
ECHO = """
import os, sys
line = sys.stdin.readline().strip()
print(line, os.getpid(), os.getppid(), os.getcwd(), os.environ.get("MCP_AUDIT_PROCESS"), sys.argv[1:], flush=True)
sys.exit(int(sys.argv[1]))
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(") ", 1)[1][0] != "Z"


def gone_within(pid: int, seconds: float = 10.0) -> bool:
    until = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < until:
        time.sleep(0.02)
    return not alive(pid)


@pytest.fixture
def zygote() -> Zygote:
    started = Zygote(sys.executable, ["json"], dict(os.environ), timeout=deadline(30))
    yield started
    started.close()


def relay(zygote: Zygote, argv: list[str], cwd: Path, token: str) -> subprocess.Popen[str]:
    env = {**os.environ, reaper.MARKER_VARIABLE: token}
    return subprocess.Popen(
        zygote.relayed([sys.executable, *argv]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=cwd,
        text=True,
    )


def test_each_relay_gets_a_fresh_child_of_the_zygote_in_its_own_directory_with_its_own_marker(
    zygote: Zygote, tmp_path: Path
) -> None:
    script = tmp_path / "echo.py"
    script.write_text(ECHO)
    seen = []
    for world in ("one", "two"):
        root = tmp_path / world
        root.mkdir()
        process = relay(zygote, [str(script), "3", world], root, f"test/{world}")
        out, _ = process.communicate(f"hello-{world}\n", timeout=deadline(30))
        # The child's status is the relay's: what the launcher sees when the target exits.
        assert process.returncode == 3
        said, pid, parent, cwd, marker, args = out.split(" ", 5)
        # What the launcher wrote to the relay's stdin reached the child.
        assert said == f"hello-{world}"
        assert int(parent) == zygote.pid
        assert cwd == str(root)
        assert marker == f"test/{world}"
        assert args.strip() == repr(["3", world])
        seen.append(int(pid))
    assert seen[0] != seen[1]


def test_a_child_shows_its_world_marker_where_the_reaper_looks(zygote: Zygote, tmp_path: Path) -> None:
    script = tmp_path / "wait.py"
    script.write_text("import sys\nsys.stdin.read()\n")
    # A marker of this run's own: another run of the suite on the machine has relays marked the same way.
    marker = f"test/marked-{os.getpid()}-{tmp_path.name}"
    with relay(zygote, [str(script)], tmp_path, marker) as process:
        until = time.monotonic() + deadline(30)
        while len(found := reaper.marked(marker)) < 2 and time.monotonic() < until:
            time.sleep(0.02)
        # The relay and its child: the reaper finds the child by the world's marker, not only the zygote's.
        assert process.pid in found, found
        assert len(found) == 2, found
        child = next(pid for pid in found if pid != process.pid)
        assert child in reaper.marked(zygote.token)
        process.kill()
    assert gone_within(child)


def test_a_killed_relay_takes_its_child_with_it(zygote: Zygote, tmp_path: Path) -> None:
    script = tmp_path / "sleep.py"
    script.write_text("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(600)\n")
    with relay(zygote, [str(script)], tmp_path, "test/killed") as process:
        assert process.stdout is not None
        child = int(process.stdout.readline())
        assert alive(child)
        os.kill(process.pid, signal.SIGKILL)
    assert gone_within(child)


def test_a_relay_gone_before_the_zygote_replies_leaves_the_zygote_serving_the_next(
    zygote: Zygote, tmp_path: Path
) -> None:
    # A relay killed right after it sent its request (a world the harness gave up on as it started):
    # the zygote's reply then fails. That failure once ended the zygote, every process it had forked,
    # and the relays still queued on its socket ("Connection reset by peer").
    script = tmp_path / "sleep.py"
    script.write_text("import time\ntime.sleep(600)\n")
    body = json.dumps({"argv": [str(script)], "env": dict(os.environ), "cwd": str(tmp_path)}).encode()
    with open(os.devnull, "rb+") as null, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.connect(zygote.socket)
        socket.send_fds(gone, [struct.pack("!I", len(body))], [null.fileno()] * 3)
        gone.sendall(body)
    # Closed before the zygote could answer: the next relay still gets a child of its own.
    echo = tmp_path / "echo.py"
    echo.write_text(ECHO)
    with relay(zygote, [str(echo), "0"], tmp_path, "test/after") as process:
        out, _ = process.communicate("still here\n", timeout=deadline(30))
    assert process.returncode == 0
    assert out.startswith("still here ")


def test_closing_the_zygote_leaves_no_process_it_forked(tmp_path: Path) -> None:
    zygote = Zygote(sys.executable, [], dict(os.environ), timeout=deadline(30))
    script = tmp_path / "sleep.py"
    script.write_text("import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(600)\n")
    with relay(zygote, [str(script)], tmp_path, "test/left") as process:
        assert process.stdout is not None
        child, parent = int(process.stdout.readline()), zygote.pid
        assert parent is not None
        zygote.close()
    assert gone_within(child)
    assert gone_within(parent)
    assert reaper.marked(zygote.token) == []
    assert not zygote.directory.exists()


def test_a_zygote_that_was_killed_says_it_is_not_running(tmp_path: Path) -> None:
    zygote = Zygote(sys.executable, [], dict(os.environ), timeout=deadline(30))
    try:
        assert zygote.running
        assert zygote.pid is not None
        os.kill(zygote.pid, signal.SIGKILL)
        until = time.monotonic() + deadline(30)
        while zygote.running and time.monotonic() < until:
            time.sleep(0.02)
        assert not zygote.running
    finally:
        zygote.close()
    assert reaper.marked(zygote.token) == []


def test_a_module_the_target_cannot_import_is_a_clear_start_failure() -> None:
    from mcp_confirm_audit.errors import TargetError

    with pytest.raises(TargetError, match=r"zygote .* did not start.*no_such_module_here"):
        Zygote(sys.executable, ["no_such_module_here"], dict(os.environ), timeout=deadline(30))


@pytest.mark.parametrize(
    ("argv", "rest"),
    [
        (["python", "server.py", "--root", "/r"], ["server.py", "--root", "/r"]),
        (["python3", "-m", "pkg.server", "--root", "/r"], ["-m", "pkg.server", "--root", "/r"]),
    ],
)
def test_a_script_or_a_module_is_what_a_zygote_runs(argv: list[str], rest: list[str]) -> None:
    assert split_command(argv) == (argv[0], rest)


@pytest.mark.parametrize(
    "argv", [["python", "-c", "pass"], ["python", "-u", "s.py"], ["server"], ["python", "-m"]]
)
def test_any_other_command_shape_is_a_usage_error_saying_which_shapes_work(argv: list[str]) -> None:
    with pytest.raises(UsageError, match=re.escape("'python SCRIPT ...' or 'python -m MODULE ...'")):
        split_command(argv)


@pytest.mark.slow  # a real target process (tests/README.md)
def test_the_reference_server_forked_per_world_answers_and_leaves_nothing(tmp_path: Path) -> None:
    profile = Profile(command=f"{sys.executable} {REFERENCE} --root {{root}}", start_timeout=deadline(60))
    zygote = Zygote(sys.executable, ["mcp.server.mcpserver"], dict(os.environ), timeout=deadline(60))
    pids = []

    async def world(name: str) -> None:
        base = tmp_path / name
        (base / "root").mkdir(parents=True)
        (base / "logs").mkdir()
        async with connect(profile, base / "root", base / "logs", "primary", zygote=zygote) as conn:
            tools = await conn.list_tools()
            assert "delete_file" in {tool.name for tool in tools}
            found = reaper.marked(f"{name}/primary")
            pids.append(next(pid for pid in found if _parent(pid) == zygote.pid))

    try:
        anyio.run(world, "world-a")
        anyio.run(world, "world-b")
    finally:
        zygote.close()
    assert pids[0] != pids[1]
    assert not any(alive(pid) for pid in pids)
    assert reaper.marked(zygote.token) == []


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[1])
