"""A connection's context is held open by a task of its own on the loop, and closed there (engine/held.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_confirm_audit.engine.connection_key import PRIMARY, ConnectionKey
from mcp_confirm_audit.engine.held import Held
from mcp_confirm_audit.engine.world import Stats, World
from mcp_confirm_audit.profile.loader import Profile

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"


def test_the_context_is_entered_and_exited_by_one_task_of_its_own() -> None:
    tasks: list[Any] = []

    @asynccontextmanager
    async def opener() -> AsyncIterator[str]:
        tasks.append(asyncio.current_task())
        yield "connection"
        tasks.append(asyncio.current_task())

    async def main() -> None:
        held = Held(opener())
        held.start()
        assert await asyncio.wrap_future(held.entered) == "connection"
        await held.close()
        assert tasks[0] is tasks[1] is not asyncio.current_task()

    anyio.run(main)


def test_a_failed_enter_is_raised_from_entered_and_a_failed_exit_from_close() -> None:
    @asynccontextmanager
    async def will_not_open() -> AsyncIterator[str]:
        raise OSError("refused")
        yield "never"  # pragma: no cover

    @asynccontextmanager
    async def will_not_close() -> AsyncIterator[str]:
        yield "connection"
        raise RuntimeError("stuck")

    async def main() -> None:
        refused = Held(will_not_open())
        refused.start()
        with pytest.raises(OSError, match="refused"):
            await asyncio.wrap_future(refused.entered)
        stuck = Held(will_not_close())
        stuck.start()
        await asyncio.wrap_future(stuck.entered)
        with pytest.raises(RuntimeError, match="stuck"):
            await stuck.close()

    anyio.run(main)


def test_another_client_an_attack_asks_for_opens_on_the_loop_and_closes_with_the_world(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with World(Profile(command=f"py:{SERVER}:build_server"), Stats()) as world:
        primary = world.ensure(PRIMARY)

        async def no_thread(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("another client of a running process needs no worker thread")

        async def attack() -> tuple[Any, Any]:
            monkeypatch.setattr(anyio.to_thread, "run_sync", no_thread)
            other = await world.open(ConnectionKey("client-1"), attach_to=PRIMARY)
            again = await world.open(ConnectionKey("client-1"), attach_to=PRIMARY)
            await other.list_tools()
            return other, again

        other, again = world.call(attack)
        monkeypatch.undo()
        assert again is other
        assert other.endpoint is primary.endpoint
    # Counted as every connection is when it closes; the event loop is gone with the world.
    assert world.stats.tool_listings == 1
    assert world.sandbox is None


def test_an_entry_given_up_on_is_cancelled_and_ends_now() -> None:
    """A handshake bounded only by the start timeout ends when its waiter gives up (Ctrl-C, SIGTERM)."""
    unwound: list[str] = []

    @asynccontextmanager
    async def never_answers() -> AsyncIterator[str]:
        try:
            await anyio.sleep_forever()
            yield "never"  # pragma: no cover
        finally:
            unwound.append("entry")

    async def main() -> None:
        for early in (True, False):
            held = Held(never_answers())
            if early:
                held.cancel()  # before the hold even began
            held.start()
            await asyncio.sleep(0)
            held.cancel()
            with anyio.fail_after(5):
                assert held._task is not None
                await held._task
            assert isinstance(held.entered.exception(timeout=0), asyncio.CancelledError)

    anyio.run(main)
    assert unwound == ["entry", "entry"]


def test_a_context_entered_as_its_waiter_gave_up_is_left_at_once() -> None:
    events: list[str] = []

    @asynccontextmanager
    async def opener() -> AsyncIterator[str]:
        events.append("entered")
        try:
            yield "connection"
        finally:
            events.append("left")

    async def main() -> None:
        held = Held(opener())
        held.start()
        assert await asyncio.wrap_future(held.entered) == "connection"
        held.cancel()  # nobody will close it: its waiter gave up as it opened
        with anyio.fail_after(5):
            assert held._task is not None
            await held._task

    anyio.run(main)
    assert events == ["entered", "left"]


def test_a_wait_for_an_entry_given_up_cancels_the_entry_the_next_time_the_loop_runs() -> None:
    """Ctrl-C while pytest's thread waits for a handshake that never ends: the entry unwinds, nobody closes it."""
    world = World(Profile(command=f"py:{SERVER}:build_server"), Stats())
    world.begin()
    unwound = threading.Event()

    def ctrl_c() -> None:
        raise KeyboardInterrupt

    @asynccontextmanager
    async def never_answers() -> AsyncIterator[Any]:
        # The interrupt comes while the handshake waits, as a person's Ctrl-C does (once it waits).
        asyncio.get_running_loop().call_soon(ctrl_c)
        try:
            await anyio.sleep_forever()
            yield None  # pragma: no cover
        finally:
            unwound.set()

    async def until_unwound() -> None:
        with anyio.fail_after(5):
            while not unwound.is_set():
                await asyncio.sleep(0)

    try:
        with pytest.raises(KeyboardInterrupt):
            world._enter(never_answers(), None)
        assert not unwound.is_set()
        # The next call of the session's runs the loop: the entry is cancelled there, with no close.
        world.call(until_unwound)
    finally:
        world.close()


def test_a_process_started_in_the_background_and_open_by_now_is_adopted_on_the_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with World(Profile(command=f"py:{SERVER}:build_server"), Stats()) as world:
        other = ConnectionKey("other")
        world.start_in_background(other)
        world._wait(world._pending[other.name])  # open by now (the loop run meanwhile)

        async def no_thread(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a connection open already needs no worker thread")

        async def attack() -> Any:
            monkeypatch.setattr(anyio.to_thread, "run_sync", no_thread)
            return await world.open(other)

        opened = world.call(attack)
        monkeypatch.undo()
        assert opened.name == "other-0"
        assert other.name not in world._pending
    assert world.stats.processes_started == 1
