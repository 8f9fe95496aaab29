"""The audit's per-request and per-attack path, made cheaper, still bounds and reports as before.

`deadline_in` is `anyio.move_on_after`'s scope made without anyio's backend lookups (every round
trip and attack makes one); `World.call` hands the loop a task and waits on a plain lock rather
than on a concurrent Future. Each must keep what the slower form did: a deadline that ends the
block, an outer cancel that is not swallowed, a result, an exception, a cancelled call said so.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import CancelledError

import anyio
import pytest

from mcp_confirm_audit.engine.phases import PhaseClock
from mcp_confirm_audit.engine.world import Stats, World
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target.driver import deadline_in


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_deadline_is_the_one_move_on_after_sets_and_ends_the_block() -> None:
    before = anyio.current_time()
    with deadline_in(30.0) as scope:
        assert isinstance(scope, anyio.CancelScope)
        assert before + 30.0 <= scope.deadline <= anyio.current_time() + 30.0
    assert not scope.cancelled_caught
    with deadline_in(0.0) as scope:
        await anyio.sleep(5)  # a round trip nobody answers: the scope's own deadline ends it
    assert scope.cancelled_caught


@pytest.mark.anyio
async def test_an_enclosing_cancel_goes_through_a_round_trips_scope() -> None:
    with anyio.CancelScope() as outer:
        with deadline_in(30.0) as inner:
            outer.cancel()
            await anyio.sleep(5)
    assert outer.cancelled_caught
    assert not inner.cancelled_caught


async def _double(value: int) -> int:
    await asyncio.sleep(0)
    return value * 2


async def _fails() -> None:
    await asyncio.sleep(0)
    raise ValueError("the technique's own error")


async def _cancelled() -> None:
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    await asyncio.sleep(0)


def test_a_call_on_the_loop_returns_raises_and_says_when_it_was_cancelled() -> None:
    world = World(Profile(command="py:unused.py:build", files={}), Stats())
    world.begin()
    try:
        assert world.call(_double, 21) == 42
        with pytest.raises(ValueError, match="the technique's own error"):
            world.call(_fails)
        with pytest.raises(CancelledError):
            world.call(_cancelled)
    finally:
        world.close()


def test_a_phase_nested_in_another_pauses_it_and_the_stack_unwinds() -> None:
    clock = PhaseClock()
    with clock.phase("attacks"):
        with clock.phase("probes"):
            assert [entry.name for entry in clock._stack] == ["attacks", "probes"]
        assert [entry.name for entry in clock._stack] == ["attacks"]
    assert clock._stack == []
