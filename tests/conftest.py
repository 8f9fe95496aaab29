"""Shared fixtures for the suite."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from mcp_confirm_audit.launch import free_port


@pytest.fixture(autouse=True)
def _quiet_inner_pytest(request: pytest.FixtureRequest) -> None:
    # Inner pytest runs (pytester) read their own ini; give them the setting
    # pytest-asyncio otherwise warns about, so warnings stay errors out here.
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini(
            "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        )


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A throw-away redis-server on a free loopback port, persistence off; stopped at the end.

    The shared ledger is tested against a real Redis: on Linux (CI) a missing
    redis-server fails the test rather than skipping it.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        message = "redis-server is not installed: apt-get install redis-server (.ci/run does)"
        if sys.platform.startswith("linux"):
            pytest.fail(message)
        pytest.skip(message)
    port = free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            assert process.poll() is None, f"redis-server exited with {process.returncode}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"redis-server did not listen on {port}"
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)
