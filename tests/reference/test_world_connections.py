"""The world's connections, opened where they are asked for: on the loop by an attack, by key, and kept.

An attack asking for another process of the target (`World.open`, from the event loop) has it
started on the loop itself, its context held in a task of its own (`engine/held.py`), with no worker
thread; a connection started in the background is a task of the loop's and is taken over by the first
attack that asks for it; one lost is opened again. Every one is closed with the world.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp_confirm_audit.engine.connection_key import PRIMARY, ConnectionKey
from mcp_confirm_audit.engine.world import Stats, World
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target.driver import Connection

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"


@contextmanager
def _world() -> Iterator[World]:
    profile = Profile(command=f"py:{SERVER}:build_server", tool="delete_file", call_timeout=10.0)
    with World(profile, Stats()) as world:
        yield world


def _threads() -> set[str]:
    return {thread.name for thread in threading.enumerate()}


def test_an_attack_opens_a_connection_on_the_loop_and_the_world_keeps_and_closes_it() -> None:
    with _world() as world:
        primary = world.ensure(PRIMARY)
        before = _threads()

        async def attack() -> tuple[Connection, Connection, Connection]:
            other = await world.open(ConnectionKey("other"))
            client = await world.open(ConnectionKey("client-1"), attach_to=PRIMARY)
            return other, client, await world.open(ConnectionKey("other"))

        other, client, again = world.call(attack)
        assert again is other  # kept: asked again, the same connection
        assert other is not primary
        assert client is not primary
        assert _threads() == before  # no worker thread was started to open them
        names = [tool.name for tool in world.call(client.list_tools)]
        assert "delete_file" in names
        assert world.stats.processes_started == 2  # the primary and the other; the client attached
    assert world.stats.tool_listings == 1  # every connection closed (its counts taken) with the world


def test_a_connection_started_in_the_background_is_taken_over_on_the_loop() -> None:
    with _world() as world:
        world.ensure(PRIMARY)
        world.start_ahead([ConnectionKey("other")])

        async def attack() -> Connection:
            return await world.open(ConnectionKey("other"))

        other = world.call(attack)
        assert other is world.ensure(ConnectionKey("other"))
        assert not world._pending


def test_a_lost_connection_asked_for_on_the_loop_is_opened_again() -> None:
    with _world() as world:
        world.ensure(PRIMARY)

        async def ask() -> Connection:
            return await world.open(ConnectionKey("other"))

        lost = world.call(ask)
        lost.alive = False
        again = world.call(ask)
        assert again is not lost
        assert again.alive
        assert any("other connection was lost" in note for note in world.stats.notes)
