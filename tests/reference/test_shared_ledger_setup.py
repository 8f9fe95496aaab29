"""Replicas started together share one SQLite ledger: none of them may die setting it up.

Switching a new database to WAL answers "database is locked" at once, without waiting out
busy_timeout, when another connection switches it at the same moment; a replica that hit it
exited before its first answer (a CI run lost a payments test that way).
"""

from __future__ import annotations

import threading
from pathlib import Path

from rounds import import_by_path

REFERENCE = Path(__file__).resolve().parents[2] / "targets" / "reference"
import_by_path("race_gate", REFERENCE / "race_gate.py")
ledgers = import_by_path("ledger", REFERENCE / "ledger.py")

REPLICAS = 4
# Without the setup lock about one start in ten lost a replica here: a hundred starts lose one.
STARTS = 100


def _start_together(path: Path) -> list[str]:
    """Every replica opens the ledger at the same instant (a barrier); what each one met."""
    barrier = threading.Barrier(REPLICAS)
    met: list[str] = []

    def replica() -> None:
        barrier.wait()
        try:
            ledgers.SqliteBackend(str(path))
        except Exception as exc:  # what a replica meets is the finding
            met.append(repr(exc))
        else:
            met.append("ready")

    threads = [threading.Thread(target=replica) for _ in range(REPLICAS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return met


def test_replicas_that_start_at_once_all_set_the_shared_ledger_up(tmp_path: Path) -> None:
    for start in range(STARTS):
        met = _start_together(tmp_path / f"ledger-{start}.db")
        assert met == ["ready"] * REPLICAS, f"start {start}: {met}"
