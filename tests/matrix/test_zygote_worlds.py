"""`isolation: process` with `zygote:`: every attack's process forked, none used twice, none left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from deadline import deadline

from mcp_confirm_audit.catalogue.generation import Generation
from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditSession
from mcp_confirm_audit.models import Layer, Result, Transcript, Verdict
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target import reaper
from mcp_confirm_audit.target.zygote import Zygote, keep_zygotes

REFERENCE = Path(__file__).parents[2] / "targets" / "reference" / "server.py"


def _forked_reference(*options: str) -> Profile:
    """The careful reference server, a fresh process per attack, each forked from one zygote."""
    return Profile(
        command=" ".join([sys.executable, str(REFERENCE), "--root", "{root}", *options]),
        tool="delete_file",
        isolation="process",
        zygote=("mcp.server.mcpserver",),
        call_timeout=deadline(10.0),
        start_timeout=deadline(60.0),
    )


def _audit_forked(
    catalogue: Catalogue, generation: Generation, family: str, *options: str, attacks: int | None = None
) -> tuple[Zygote | None, list[tuple[Result, Transcript]]]:
    """The controls and one family's attacks (its first `attacks`, or all) on the forked reference server,
    and the zygote they used."""
    specs = [spec for spec in catalogue.active if spec.family == family][:attacks]
    session = AuditSession(_forked_reference(*options), catalogue, generation)
    session.start(specs)
    try:
        session.controls("delete_file")
        runs = [session.run(spec, "delete_file") for spec in specs]
        return session.world.zygote, runs
    finally:
        session.close()


@pytest.fixture
def own_zygote() -> Iterator[None]:
    # The matrices keep one zygote for all their audits; these tests are about an audit's own.
    with keep_zygotes(False):
        yield


@pytest.mark.usefixtures("own_zygote")
def test_with_isolation_every_attack_gets_a_forked_process_nobody_used_and_none_is_left(
    catalogue: Catalogue, generation: Generation
) -> None:
    zygote, runs = _audit_forked(catalogue, generation, "replay")
    assert zygote is not None
    assert {(r.verdict, r.layer) for r, _ in runs} == {(Verdict.REFUSED, Layer.TOOL)}
    used = [{e.connection for e in transcript.exchanges} for _, transcript in runs]
    assert all(used), used
    assert all(a.isdisjoint(b) for i, a in enumerate(used) for b in used[i + 1 :]), used
    assert reaper.marked(zygote.token) == []
    assert not zygote.directory.exists()


@pytest.mark.usefixtures("own_zygote")
def test_a_zygote_killed_mid_audit_is_started_again_for_the_next_world(
    catalogue: Catalogue, generation: Generation
) -> None:
    profile = _forked_reference()
    spec = next(spec for spec in catalogue.active if spec.family == "replay")
    session = AuditSession(profile, catalogue, generation)
    session.start([spec])
    try:
        session.controls("delete_file")
        first = session.world.zygote
        assert first is not None
        assert first.pid is not None
        os.kill(first.pid, signal.SIGKILL)
        first._process.wait()  # type: ignore[union-attr]
        # Worlds already started from it still serve; the next start needs a zygote again.
        results = [session.run(spec, "delete_file")[0] for _ in range(8)]
        again = session.world.zygote
    finally:
        session.close()
    assert {(r.verdict, r.layer) for r in results} == {(Verdict.REFUSED, Layer.TOOL)}
    assert again is not None
    assert again is not first
    assert "the target's zygote exited; it was started again" in session.stats.notes
    assert reaper.marked(first.token) == []
    assert reaper.marked(again.token) == []


def _kept_audit(
    catalogue: Catalogue, generation: Generation, family: str, *options: str
) -> tuple[Zygote, set[str]]:
    """One audit of the forked reference server: its zygote, and every marker issued so far.

    The controls and one attack (a forked process each): what is proven is the zygote kept across
    audits, not the family; every attack of a family in its own process is the isolation test's.
    """
    zygote, runs = _audit_forked(catalogue, generation, family, *options, attacks=1)
    assert zygote is not None
    assert Verdict.REFUSED in {r.verdict for r, _ in runs}
    assert {r.verdict for r, _ in runs} <= {Verdict.REFUSED, Verdict.NOT_APPLICABLE}
    return zygote, set(reaper.ISSUED)


def test_kept_zygotes_serve_audit_after_audit_and_no_audits_process_outlives_it(
    catalogue: Catalogue, generation: Generation
) -> None:
    # Outermost (the matrices' own keeping set aside), so that closing it stops what it kept.
    with keep_zygotes(False), keep_zygotes():
        before = set(reaper.ISSUED)
        first, issued_first = _kept_audit(catalogue, generation, "replay")
        # Every process the first audit started is gone with it; the zygote it was forked from is not.
        assert [token for token in issued_first - before if reaper.marked(token)] == [first.token]
        # One attack an audit (a process each): what is proven is the zygote kept across audits.
        second, issued_second = _kept_audit(catalogue, generation, "cross-target")
        assert second is first
        assert [token for token in issued_second - before if reaper.marked(token)] == [first.token]
        # The same script started with other options (a matrix's next server) is forked from it too:
        # what its confinement must reveal is the same, only the arguments each child is given differ.
        third, issued_third = _kept_audit(catalogue, generation, "identity-swap", "--second-tool")
        assert third is first
        assert [token for token in issued_third - before if reaper.marked(token)] == [first.token]
        assert first.running
    # Closing what kept it stops it, with whatever it forked.
    assert not first.running
    assert reaper.marked(first.token) == []
    assert not first.directory.exists()


def test_a_harness_killed_outright_leaves_no_zygote_behind(tmp_path: Path) -> None:
    # SIGKILL runs no cleanup: the zygote must notice by itself that the harness is gone.
    harness = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys, time\n"
            "from mcp_confirm_audit.target.zygote import Zygote\n"
            "zygote = Zygote(sys.executable, [], dict(os.environ), 60)\n"
            "print(zygote.pid, flush=True)\n"
            "time.sleep(600)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    with harness, harness.stdout as printed:  # type: ignore[union-attr]
        zygote_pid = int(printed.readline())
        harness.kill()
    until = time.monotonic() + deadline(30)  # a liveness bound, not a speed measurement
    while _alive(zygote_pid) and time.monotonic() < until:
        time.sleep(0.05)
    assert not _alive(zygote_pid)


def _alive(pid: int) -> bool:
    """Running, and not a zombie (an orphan is reaped by init, not by us)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"
