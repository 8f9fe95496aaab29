"""A write in place in two steps, looked at between them, is one effect to the race restorer.

A server that writes its file in place empties it first (O_TRUNC, or a truncate)
and writes it a moment later. The restorer that puts the victim back during a race
must not count what it sees in between as one effect and the write that lands after
it as another: that made one redemption of eight read as "2 effects" on a real
governance proxy, and a careful server `vulnerable`.

The confirm-kinds server's `write_file`, built in process with a `race_gate.WriteGap`,
writes in those two steps; a writer of the race waits in the gap, the file empty,
until the restorer has looked at it (a whole look begun after the writer came), and
only then writes. No pause decides what the restorer sees: the gap is held open
until it has looked. The careful server honours one approval once, over a token and
over a pending flow (`refused`, "took effect once"); its `reusable-token` twin, the same
writer, still lets several redemptions write, each counted once (`vulnerable`).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION
from deadline import deadline
from test_confirmation_kinds import HUMAN_CHANNEL, KINDS_SERVER

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import AttackSpec, Verdict
from mcp_confirm_audit.oracle.restorer import Restorer
from mcp_confirm_audit.profile.loader import profile_from_mapping

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "targets" / "reference"))
import race_gate

RACED = "MCA-TOKREUSE-003"
SPENT = "MCA-DSPEND-001"


class Looks:
    """How many looks the restorers of this process have finished."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = threading.Condition()

    def after(self, count: int) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: self.count >= count, timeout=deadline(30))


@pytest.fixture
def looks(monkeypatch: pytest.MonkeyPatch) -> Looks:
    seen = Looks()
    look = Restorer.look

    def counted(self: Restorer) -> None:  # the restorer's own look, then counted: nothing else changes
        look(self)
        with seen.changed:
            seen.count += 1
            seen.changed.notify_all()

    monkeypatch.setattr(Restorer, "look", counted)
    return seen


@pytest.fixture
def gap(looks: Looks) -> Iterator[race_gate.WriteGap]:
    """The gap, let go one writer at a time once the restorer has looked at the emptied file."""
    held = race_gate.WriteGap(hold=deadline(30))
    done = threading.Event()

    def let_go() -> None:
        while not done.is_set():
            if not held.writer_waiting(timeout=0.05):  # only so that `done` is seen: no writer, no wait
                continue
            with looks.changed:
                came = looks.count
            # Two more looks: the second began after the writer emptied the file and came here.
            looks.after(came + 2)
            held.release()

    opener = threading.Thread(target=let_go, name="write-gap-opener", daemon=True)
    opener.start()
    yield held
    done.set()
    opener.join(timeout=deadline(10))
    assert not opener.is_alive()


# (mechanism, flaw, attack) -> verdict: both races of one approval; the person's own channel for pending.
CASES = [
    ("token", None, RACED, Verdict.REFUSED),
    ("pending", None, RACED, Verdict.REFUSED),
    ("pending", None, SPENT, Verdict.REFUSED),
    ("token", "reusable-token", RACED, Verdict.VULNERABLE),
]


@pytest.mark.parametrize(("mechanism", "flaw", "attack", "verdict"), CASES)
def test_a_write_in_place_seen_half_done_is_counted_once(
    catalogue: Catalogue,
    gap: race_gate.WriteGap,
    mechanism: str,
    flaw: str | None,
    attack: str,
    verdict: Verdict,
) -> None:
    factory = {"mechanism": mechanism, "flaws": [flaw] if flaw else [], "write_tool": True, "write_gap": gap}
    raw = {
        "command": f"py:{KINDS_SERVER}:build_server",
        "factory_args": factory,
        "tool": "write_file",
        "call_timeout": deadline(10),
        **(HUMAN_CHANNEL if mechanism == "pending" else {}),
    }

    def only(spec: AttackSpec) -> bool:
        return spec.id == attack

    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=only,
        generation=MATRIX_GENERATION,
    )
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    result = run.by_id()[attack]
    assert result.verdict is verdict, (result.reason, result.evidence)
    if verdict is Verdict.REFUSED:
        # One writer went through the gap, looked at half done, and its write was counted once.
        assert gap.came == 1
        assert "took effect once" in result.reason
        assert "effects: 1 during the race, 1 in all (the victim put back each time)" in result.evidence
    else:
        # Several redemptions wrote, each through the gap and each counted once.
        assert gap.came >= 2
        effects = next(line for line in result.evidence if line.startswith("effects: "))
        during = int(effects.split()[1])
        assert 2 <= during <= gap.came, effects
