"""Ctrl-C (or the plugin's SIGTERM) while pytest's thread runs the session's event loop (engine/world.py).

The loop runs on pytest's thread, so a signal's KeyboardInterrupt would land in the middle of whatever
task step or anyio bookkeeping was running, and leave it half done: cancellations that never finish, a
process started and kept by nobody, a close that hangs. Here it is raised once the loop stands still,
the call given up through its own cancel scope, so what the call shields still ends whole.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from deadline import deadline

from mcp_confirm_audit.engine.connection_key import PRIMARY, ConnectionKey
from mcp_confirm_audit.engine.world import Stats, World
from mcp_confirm_audit.profile.loader import Profile

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"


@pytest.fixture(autouse=True)
def _ctrl_c_raises() -> Iterator[None]:
    """Ctrl-C raising KeyboardInterrupt, as in a terminal, whatever this process inherited.

    An xdist worker, or a process started in the background by a shell, ignores SIGINT: a test that
    relied on it would wait for an interrupt that never comes.
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _ctrl_c() -> None:
    """Ctrl-C, from inside an attack: the loop is running on this thread when it comes."""
    os.kill(os.getpid(), signal.SIGINT)


async def _until_given_up() -> None:
    """An attack waiting for an answer that never comes, bounded so a test that fails does not hang."""
    with anyio.fail_after(deadline(10)):
        await anyio.sleep_forever()


def test_ctrl_c_during_an_attack_ends_the_call_and_leaves_the_loop_and_its_connections_whole() -> None:
    with World(Profile(command=f"py:{SERVER}:build_server"), Stats()) as world:
        primary = world.ensure(PRIMARY)

        async def attack_waiting_for_an_answer() -> None:
            _ctrl_c()
            await _until_given_up()

        with pytest.raises(KeyboardInterrupt):
            world.call(attack_waiting_for_an_answer)
        # Nothing of the loop was left half done: the next call runs and the connection still answers.
        assert [tool.name for tool in world.call(primary.list_tools)]


def test_ctrl_c_while_an_attack_starts_another_process_keeps_that_process_to_close_with_the_others() -> None:
    other = ConnectionKey("other")
    with World(Profile(command=f"py:{SERVER}:build_server"), Stats()) as world:
        world.ensure(PRIMARY)

        async def attack_opening_another_process() -> None:
            _ctrl_c()  # handled once the attack waits, which it first does inside the shielded start
            await world.open(other)
            await _until_given_up()

        with pytest.raises(KeyboardInterrupt):
            world.call(attack_opening_another_process)
        # The start ran to its end and the process is the world's: the close below closes it, and no
        # task of its client is left for the loop's end to wait on.
        assert other.name in world._live
    assert world.stats.processes_started == 2
    assert world._loop is None


def test_a_handler_that_raises_nothing_cancels_nothing() -> None:
    """The plugin's SIGTERM while pytest finishes the session only notes it: the close it interrupts goes on."""
    noted: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: noted.append(signum))
    try:
        with World(Profile(command=f"py:{SERVER}:build_server"), Stats()) as world:
            primary = world.ensure(PRIMARY)

            async def closing_step() -> list[str]:
                os.kill(os.getpid(), signal.SIGTERM)
                await anyio.sleep(0)  # the handler runs; the step goes on
                return [tool.name for tool in await primary.list_tools()]

            assert world.call(closing_step)
        assert noted == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)
