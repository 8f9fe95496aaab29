"""The window of a check-then-spend flaw, held open by a count, never by a pause.

A flawed server that checks an approval and spends it a moment later lets every
redemption sent together through, but only those that reach the check before the
first one spends it. A pause (50 to 150 ms, once) made that a matter of timing, lost
on a loaded machine; a gate that waited for three redemptions held every lone
(honest) redemption for seconds. Here the race is announced: a harness that sends
several redemptions of one approval at once says on each how many of them go to
this process (the request's `_meta`, key `ANNOUNCED`, `{"width": n}`). Every one
that passed the check waits at the gate until `n` have (a barrier); the server then
spends it, and those that passed act one at a time, each once its subject is back
in place (`until`: the harness puts the victim back after every effect), so each one
is counted, at any load. A redemption that announces nothing is a race of one: it
goes on at once, never waiting.

The announcement only sizes the window the flaw already has: a careful server has no
gate and ignores the key, and a client that does not announce still races the flaw,
as it would a server written elsewhere (by timing). `hold` bounds every wait. It is a
safety bound, not the mechanism: it is reached only when an announced redemption
never comes (refused before the check, or its connection lost).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

ANNOUNCED = "io.github.mcp-confirm-audit/race"
HOLD = 4.0
# Between two looks at a subject that is not back yet: the harness's restorer puts it back within
# a fraction of a millisecond on a quiet machine; this only keeps the wait from spinning.
_LOOK = 0.001

# The width the request being handled announced (1: none). Set by `announced`, the servers'
# middleware; read in the gate, in the request's task or the worker thread it runs a tool in
# (anyio copies the context into both).
_width: contextvars.ContextVar[int] = contextvars.ContextVar("race_width", default=1)


def width_of(params: Mapping[str, Any] | None) -> int:
    """The width a request's params announce: 1 (a race of one) unless a positive integer is given."""
    meta = (params or {}).get("_meta")
    race = meta.get(ANNOUNCED) if isinstance(meta, Mapping) else None
    width = race.get("width") if isinstance(race, Mapping) else None
    return width if isinstance(width, int) and not isinstance(width, bool) and width > 1 else 1


async def announced(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Server middleware: the race width the request announces, for the gate to read."""
    token = _width.set(width_of(ctx.params) if ctx.method == "tools/call" else 1)
    try:
        return await call_next(ctx)
    finally:
        _width.reset(token)


def width_now() -> int:
    """The width the request being handled announced (`announced`); 1 for none."""
    return _width.get()


class RaceGate:
    """Thread-safe: an async server calls it through `anyio.to_thread.run_sync`."""

    def __init__(self, hold: float = HOLD) -> None:
        if hold <= 0:
            raise ValueError("a race gate's hold must be a positive number of seconds")
        self.hold = hold
        self._passed: dict[str, int] = {}
        self._changed = threading.Condition()

    def passed(self, key: str, width: int | None = None) -> int:
        """One redemption of approval `key` passed the check: wait until the race's width have; how many did.

        `width` defaults to what the request being handled announced (`announced`); one never waits.
        """
        width = _width.get() if width is None else width
        with self._changed:
            self._passed[key] = self._passed.get(key, 0) + 1
            self._changed.notify_all()
            if width > 1:
                self._changed.wait_for(lambda: self._passed[key] >= width, timeout=self.hold)
            return self._passed[key]

    def until(self, ready: Callable[[], bool]) -> bool:
        """Wait (at most `hold`) until `ready()`: the subject a redemption acts on is back in place."""
        deadline = time.monotonic() + self.hold
        while not ready():
            if time.monotonic() >= deadline:
                return False
            with self._changed:
                self._changed.wait(_LOOK)
        return True


class WriteGap:
    """The gap of a writer that empties a file and then writes it, held open until a test lets it go.

    A server that writes in place in two steps (truncate, then write) shows the file
    emptied between them; whatever looks at it then sees one write half done. A test
    that wants something seen in that gap (the harness's restorer looking at the
    emptied file) waits for a writer to be in it (`writer_waiting`), then `release`s
    it, one writer at a time in the order they came. The server sends only a writer of an
    announced race here (`width_now() > 1`, as at `RaceGate`): an honest call goes
    straight through. `hold` bounds every wait: a safety bound, reached only when no test
    lets the writer go.
    """

    def __init__(self, hold: float = HOLD) -> None:
        self.hold = hold
        self.came = 0
        self.released = 0
        self._changed = threading.Condition()

    def wait_here(self) -> None:
        """Called by the writer, the file emptied: wait for the test's release."""
        with self._changed:
            self.came += 1
            ticket = self.came
            self._changed.notify_all()
            self._changed.wait_for(lambda: self.released >= ticket, timeout=self.hold)

    def writer_waiting(self, timeout: float) -> bool:
        """Called by the test: wait (at most `timeout`) until a writer is in the gap."""
        with self._changed:
            return self._changed.wait_for(lambda: self.came > self.released, timeout=timeout)

    def release(self) -> None:
        """Let the writer that came first of those waiting write."""
        with self._changed:
            self.released += 1
            self._changed.notify_all()
