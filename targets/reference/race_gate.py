"""The window of a check-then-spend flaw, held open by a count, never by a pause.

A flawed server that checks an approval and spends it a moment later lets every
redemption sent together through, but only those that reach the check before the
first one spends it. A pause (50 to 150 ms, once) made that a matter of timing, lost
on a loaded machine. Here every redemption of one approval that passed the check
waits at the gate until `width` of them have (a barrier); the server then spends it,
and those that passed act one at a time, each once its subject is back in place
(`until`: the harness puts the victim back after every effect), so each one is
counted, at any load. `width` is at least three by default: in a race whose first
answer is a decline, two accepts still pass.

`hold` bounds every wait. It is a safety bound, not the mechanism: a lone redemption
(an honest approval) waits it out once and then goes on alone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

WIDTH = 3
HOLD = 4.0
# Between two looks at a subject that is not back yet: the harness's restorer puts it back within
# a fraction of a millisecond on a quiet machine; this only keeps the wait from spinning.
_LOOK = 0.001


class RaceGate:
    """Thread-safe: an async server calls it through `anyio.to_thread.run_sync`."""

    def __init__(self, width: int = WIDTH, hold: float = HOLD) -> None:
        if width < 2:
            raise ValueError("a race gate needs a width of at least 2 (one redemption is no race)")
        if hold <= 0:
            raise ValueError("a race gate's hold must be a positive number of seconds")
        self.width = width
        self.hold = hold
        self._passed: dict[str, int] = {}
        self._changed = threading.Condition()

    def passed(self, key: str) -> int:
        """One redemption of approval `key` passed the check: wait until `width` have; how many did."""
        with self._changed:
            self._passed[key] = self._passed.get(key, 0) + 1
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._passed[key] >= self.width, timeout=self.hold)
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
