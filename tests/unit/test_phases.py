"""The bench's breakdown counts every second once, in the innermost phase running."""

from __future__ import annotations

import time

from mcp_confirm_audit.engine.phases import PHASES, PhaseClock


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_nested_phase_is_not_counted_in_its_parent() -> None:
    clock = PhaseClock()
    started = time.perf_counter()
    with clock.phase("controls"):
        _spin(0.01)
        with clock.phase("probes"):
            _spin(0.02)
        _spin(0.01)
    elapsed = time.perf_counter() - started
    assert clock.totals["probes"] >= 0.02
    assert clock.totals["controls"] >= 0.02
    # Nothing counted twice: the phases add up to the time that passed, no more.
    assert sum(clock.totals.values()) <= elapsed


def test_every_phase_is_reported_even_when_unused() -> None:
    assert list(PhaseClock().totals) == list(PHASES)
