"""`isolation: process` with `zygote:`: every attack's process forked, none used twice, none left."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from mcp_confirm_audit.catalogue.generation import Generation
from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditSession
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target import reaper

REFERENCE = Path(__file__).parents[2] / "targets" / "reference" / "server.py"


def _forked_reference() -> Profile:
    """The careful reference server, a fresh process per attack, each forked from one zygote."""
    return Profile(
        command=f"{sys.executable} {REFERENCE} --root {{root}}",
        tool="delete_file",
        isolation="process",
        zygote=("mcp.server.mcpserver",),
        call_timeout=10.0,
        start_timeout=60.0,
    )


def test_with_isolation_every_attack_gets_a_forked_process_nobody_used_and_none_is_left(
    catalogue: Catalogue, generation: Generation
) -> None:
    profile = _forked_reference()
    specs = [spec for spec in catalogue.active if spec.family == "replay"]
    session = AuditSession(profile, catalogue, generation)
    session.start(specs)
    try:
        session.controls("delete_file")
        runs = [session.run(spec, "delete_file") for spec in specs]
        zygote = session._zygote
    finally:
        session.close()
    assert zygote is not None
    assert {(r.verdict, r.layer) for r, _ in runs} == {(Verdict.REFUSED, Layer.TOOL)}
    used = [{e.connection for e in transcript.exchanges} for _, transcript in runs]
    assert all(used), used
    assert all(a.isdisjoint(b) for i, a in enumerate(used) for b in used[i + 1 :]), used
    assert reaper.marked(zygote.token) == []
    assert not zygote.directory.exists()


def test_a_zygote_killed_mid_audit_is_started_again_for_the_next_world(
    catalogue: Catalogue, generation: Generation
) -> None:
    profile = _forked_reference()
    spec = next(spec for spec in catalogue.active if spec.family == "replay")
    session = AuditSession(profile, catalogue, generation)
    session.start([spec])
    try:
        session.controls("delete_file")
        first = session._zygote
        assert first is not None
        assert first.pid is not None
        os.kill(first.pid, signal.SIGKILL)
        first._process.wait()  # type: ignore[union-attr]
        # Worlds already started from it still serve; the next start needs a zygote again.
        results = [session.run(spec, "delete_file")[0] for _ in range(8)]
        again = session._zygote
    finally:
        session.close()
    assert {(r.verdict, r.layer) for r in results} == {(Verdict.REFUSED, Layer.TOOL)}
    assert again is not None
    assert again is not first
    assert "the target's zygote exited; it was started again" in session.stats.notes
    assert reaper.marked(first.token) == []
    assert reaper.marked(again.token) == []
