"""Run the audit against the reference servers, as real stdio subprocesses."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from mcp_confirm_audit.catalogue.generation import CI_SEED, Generation
from mcp_confirm_audit.catalogue.loader import Catalogue, load_catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec
from mcp_confirm_audit.profile.loader import Profile

REFERENCE_SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
HOSTILE_SERVER = Path(__file__).resolve().parents[2] / "targets" / "hostile" / "server.py"
# Every flaw is caught by a named example; generated names add breadth, and a
# fixed seed keeps the matrix the same on every run.
MATRIX_GENERATION = Generation(examples=10, seed=CI_SEED)


def reference_command(*options: str) -> str:
    return shlex.join([sys.executable, str(REFERENCE_SERVER), "--root", "{root}", *options])


@pytest.fixture(scope="session")
def generation() -> Generation:
    return MATRIX_GENERATION


@pytest.fixture(scope="session")
def catalogue() -> Catalogue:
    return load_catalogue()


AuditFn = Callable[..., AuditRun]


@pytest.fixture(scope="session")
def audit_reference(catalogue: Catalogue) -> AuditFn:
    """Audit the reference server started with the given options; one process per call."""

    def audit(
        *options: str,
        families: Sequence[str] | None = None,
        tool: str | None = "delete_file",
        **settings: Any,
    ) -> AuditRun:
        """`settings` are profile keys (replicas, ttl_flag...); `command` replaces the stdio one."""
        command = settings.pop("command", None) or reference_command(*options)
        profile = Profile(command=command, tool=tool, call_timeout=10.0, **settings)

        def select(spec: AttackSpec) -> bool:
            return families is None or spec.family in families

        return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)

    return audit


@pytest.fixture(scope="session")
def audit_hostile(catalogue: Catalogue) -> AuditFn:
    """Audit the hostile reference server in one --mode: the careful server with one misbehaviour."""

    def audit(mode: str) -> AuditRun:
        command = shlex.join([sys.executable, str(HOSTILE_SERVER), "--root", "{root}", "--mode", mode])
        # Short: a reliable hang costs two timeouts, and one is enough to tell.
        profile = Profile(command=command, tool="delete_file", call_timeout=2.0)
        return run_audit(profile, catalogue=catalogue, generation=MATRIX_GENERATION)

    return audit
