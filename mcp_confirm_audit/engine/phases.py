"""Where an audit's time goes, by phase: what `bench` prints, and nothing else reads.

Phases nest (the probes a control looks through, a process started for an attack), and
each second is counted once, in the innermost phase running: time spent in a nested
phase is not its parent's. The audit is sequential (the pytest thread waits while the
event loop thread works), so one stack serves both threads; processes started in the
background, beside the audit, are not counted at all: they cost no wall time of its own.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

# In the order an audit goes through them.
PHASES = ("starts", "controls", "probes", "attacks", "waits", "stops", "reports")


class PhaseClock:
    def __init__(self) -> None:
        self.totals: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self._stack: list[_Phase] = []
        self._lock = threading.Lock()

    def phase(self, name: str) -> _Phase:
        """A `with` block counted in phase `name` (a class, not a generator: every attack and probe enters one)."""
        return _Phase(self, name)

    def _add(self, entry: _Phase, now: float) -> None:
        self.totals[entry.name] = self.totals.get(entry.name, 0.0) + (now - entry.since)
        entry.since = now


class _Phase:
    """One phase running: its time is counted from `since` until a nested phase starts or it ends."""

    __slots__ = ("_clock", "name", "since")

    def __init__(self, clock: PhaseClock, name: str) -> None:
        self._clock = clock
        self.name = name
        self.since = 0.0

    def __enter__(self) -> None:
        clock = self._clock
        now = self.since = time.perf_counter()
        with clock._lock:
            if clock._stack:
                clock._add(clock._stack[-1], now)  # the phase it nests in pauses
            clock._stack.append(self)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        now = time.perf_counter()
        clock = self._clock
        with clock._lock:
            stack = clock._stack
            if self in stack:
                clock._add(self, now)
                stack.remove(self)
            if stack:
                stack[-1].since = now  # the phase it nested in runs again
