"""The bench's breakdown counts every second once: in the innermost phase running, and in round trips."""

from __future__ import annotations

import time
from typing import Any, cast

import anyio
import pytest

from mcp_confirm_audit.engine.phases import PHASES, PhaseClock
from mcp_confirm_audit.models import Outcome, Phase, Response
from mcp_confirm_audit.target.driver import Connection


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


@pytest.mark.anyio
async def test_requests_in_flight_together_are_one_stretch_of_waiting_on_the_target() -> None:
    # bench sets the audit against its own round trips: a race's redemptions, sent side by side,
    # must not count the same wait twice and make the harness's own work look smaller than it is.
    connection = Connection("primary", cast(Any, None), call_timeout=5.0, stderr_path=None)
    answered = anyio.Event()

    async def held_until_the_other_is_answered() -> Response:
        await answered.wait()
        return Response(Outcome.COMPLETE)

    async def answered_after_a_while() -> Response:
        _spin(0.02)
        answered.set()
        return Response(Outcome.COMPLETE)

    started = time.perf_counter()
    async with anyio.create_task_group() as race:
        race.start_soon(connection._exchange, Phase.ATTACK, "held", {}, held_until_the_other_is_answered)
        await anyio.sleep(0)  # the held request is in flight
        quick = await connection._exchange(Phase.ATTACK, "quick", {}, answered_after_a_while)
    span = time.perf_counter() - started
    assert connection.round_trips == 2
    assert quick.elapsed_ms >= 20
    # Counted once: no more than the time that passed, though the two requests' own times add up to more.
    assert 0.02 <= connection.waited_on <= span
