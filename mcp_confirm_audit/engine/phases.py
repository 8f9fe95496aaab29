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
from collections.abc import Iterator
from contextlib import contextmanager

# In the order an audit goes through them.
PHASES = ("starts", "controls", "probes", "attacks", "waits", "stops", "reports")


class PhaseClock:
    def __init__(self) -> None:
        self.totals: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self._stack: list[list[object]] = []
        self._lock = threading.Lock()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        entry: list[object] = [name, time.perf_counter()]
        with self._lock:
            self._pause(entry[1])
            self._stack.append(entry)
        try:
            yield
        finally:
            now = time.perf_counter()
            with self._lock:
                if entry in self._stack:
                    self._add(entry, now)
                    self._stack.remove(entry)
                if self._stack:
                    self._stack[-1][1] = now

    def _pause(self, now: object) -> None:
        if self._stack:
            self._add(self._stack[-1], now)

    def _add(self, entry: list[object], now: object) -> None:
        name, since = entry
        assert isinstance(name, str)
        assert isinstance(since, float)
        assert isinstance(now, float)
        self.totals[name] = self.totals.get(name, 0.0) + (now - since)
        entry[1] = now
