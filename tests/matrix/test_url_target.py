"""A server someone else started: the audit reaches it by URL and works in the directory it serves."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.profile.loader import Profile

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_listening(port: int, process: subprocess.Popen[bytes], bound: float = 20.0) -> None:
    until = time.monotonic() + deadline(bound)
    while time.monotonic() < until:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the server did not listen on {port} within {deadline(bound):g}s")


@pytest.fixture
def running_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    served = tmp_path / "served"
    served.mkdir()
    port = _free_port()
    command = [sys.executable, str(SERVER), "--root", str(served), "--transport", "http", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_until_listening(port, process)
        yield f"http://127.0.0.1:{port}/mcp", served
    finally:
        process.terminate()
        process.wait(timeout=deadline(10))


def test_a_running_server_reached_by_url_refuses_the_catalogue_in_its_served_directory(
    running_server: tuple[str, Path], catalogue: Catalogue
) -> None:
    url, served = running_server
    run = run_audit(
        Profile(command=url, root=str(served), tool="delete_file", call_timeout=deadline(10.0)),
        catalogue=catalogue,
    )
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    judged = [r for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE]
    assert {r.verdict for r in judged} == {Verdict.REFUSED}, [
        (r.id, r.verdict, r.reason) for r in judged if r.verdict is not Verdict.REFUSED
    ]
    # Every family that needs no process of its own ran over this URL.
    assert {"replay", "cross-target", "forged-state", "consent", "out-of-root", "symlink-swap"} <= {
        r.family for r in judged
    }
    # The audit works in a folder of its own inside the served directory, and leaves it empty.
    assert list(served.iterdir()) == []
