"""A target's own evidence log in SQLite write-ahead mode is bookkeeping, never an action's effect.

agentveil-mcp-proxy, zero configuration: the proxy writes a row for every call,
refused ones too, into ROOT/.avp/mcp-proxy/evidence.sqlite, whose write-ahead file
(`-wal`) moved on each call; twelve tools that never ask were said to have "acted
without asking" by it. What moves on a call the target refused is the target's
bookkeeping, learned from the controls, shared with every tool's controls and named
in the report. The notes reference server with `evidence` keeps such a log (real
sqlite3, WAL mode, its connection held open); nothing else is configured.
"""

from __future__ import annotations

from pathlib import Path

from conftest import forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.profile.loader import Profile

NOTES = Path(__file__).resolve().parents[2] / "targets" / "notes" / "server.py"
WAL = "root/.notes/evidence.sqlite-wal"


def test_a_write_ahead_file_every_call_moves_is_no_tools_effect(
    catalogue: Catalogue, generation: object
) -> None:
    profile = Profile(
        command=f"py:{NOTES}:build_server",
        factory_args={"evidence": True},
        protocol="2025-11-25",
        call_timeout=10.0,
    )
    run = run_audit(
        forked(profile),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.id == "MCA-UNGATED-001",
    )
    details = [(c.tool, c.name, c.detail) for c in run.controls]
    assert not any("acted without asking" in detail for _, _, detail in details), details
    # handoff (nothing waiting) neither asks nor acts: left out, as on the server with no log.
    assert "handoff: did not ask, and showed no effect" in run.left_out, run.left_out
    named = [detail for tool, name, detail in details if tool == "keep" and name == "bookkeeping"]
    assert named, details
    assert WAL in named[0], details
    assert "moved on a call the target refused" in named[0], named
