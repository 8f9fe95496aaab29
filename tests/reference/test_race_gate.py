"""The flawed servers' race gate: a count opens it, never a pause, and a lone redemption never waits."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from deadline import deadline
from rounds import import_by_path

from mcp_confirm_audit.target import race

race_gate = import_by_path(
    "race_gate", Path(__file__).resolve().parents[2] / "targets" / "reference" / "race_gate.py"
)


def test_the_harness_and_the_servers_name_the_announcement_alike() -> None:
    assert race_gate.ANNOUNCED == race.ANNOUNCED


def _params(meta: Any) -> dict[str, Any]:
    return {"name": "delete_file", "_meta": meta}


@pytest.mark.parametrize(
    ("params", "width"),
    [
        (_params({race.ANNOUNCED: {"width": 8}}), 8),
        (None, 1),
        ({"name": "delete_file"}, 1),
        (_params({"other/key": {"width": 8}}), 1),
        (_params({race.ANNOUNCED: {"width": True}}), 1),
        (_params({race.ANNOUNCED: {"width": "8"}}), 1),
        (_params({race.ANNOUNCED: {"width": 0}}), 1),
        (_params({race.ANNOUNCED: 8}), 1),
        (_params("not a mapping"), 1),
    ],
)
def test_a_request_announces_a_race_only_with_a_width_above_one(params: Any, width: int) -> None:
    assert race_gate.width_of(params) == width


def test_what_the_harness_sends_in_a_race_is_what_the_gate_reads() -> None:
    seen: list[int] = []

    def one() -> None:
        race.announce(3)
        seen.append(race_gate.width_of({"_meta": race.meta()}))

    thread = threading.Thread(target=one)  # its own context: the announcement ends with it
    thread.start()
    thread.join()
    assert seen == [3]
    assert race.meta() is None


def test_redemptions_announced_together_all_pass_the_check_before_any_goes_on() -> None:
    # Each returns how many had passed when it went on: all three, whichever thread came first.
    gate = race_gate.RaceGate(hold=deadline(60))
    counts: list[int] = []
    threads = [threading.Thread(target=lambda: counts.append(gate.passed("approval", 3))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counts == [3, 3, 3]


class _NeverWaits(threading.Condition):
    def wait_for(self, predicate: Any, timeout: float | None = None) -> Any:
        raise AssertionError("a redemption that announced no race waited at the gate")


def test_a_lone_redemption_goes_on_without_waiting_for_another() -> None:
    gate = race_gate.RaceGate()
    gate._changed = _NeverWaits()
    assert gate.passed("approval") == 1
    assert gate.passed("another approval", 1) == 1


def test_a_writer_in_the_write_gap_writes_only_once_let_go_in_its_turn() -> None:
    gap = race_gate.WriteGap(hold=deadline(60))
    order: list[str] = []

    def writer(name: str) -> None:
        gap.wait_here()
        order.append(name)

    first = threading.Thread(target=writer, args=("first",))
    first.start()
    assert gap.writer_waiting(timeout=deadline(30))
    second = threading.Thread(target=writer, args=("second",))
    second.start()
    with gap._changed:  # both in the gap before either is let go
        assert gap._changed.wait_for(lambda: gap.came == 2, timeout=deadline(30))
    assert order == []
    gap.release()
    first.join(timeout=deadline(30))
    assert order == ["first"]
    assert gap.writer_waiting(timeout=deadline(30))
    gap.release()
    second.join(timeout=deadline(30))
    assert order == ["first", "second"]
    assert not gap.writer_waiting(timeout=0)
