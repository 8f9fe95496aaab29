"""Putting the victim back, with the identity the user confirmed, whenever it goes.

A second redemption of one approval that slipped past a single-use check
would find nothing left to act on, and be refused by a later check that says
nothing about single use. A hard link keeps the victim's inode alive; a thread
watching the disk links it back the moment it is removed (or writes its bytes
and times back if it was changed in place), so the victim is always there with
the same device, inode, size and mtime, and every effect is counted.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import TracebackType

from .sandbox import identity_of

# Between two looks at the victim while a race runs: short enough to put it
# back between two redemptions, long enough to leave the harness's event loop
# the interpreter. Only while a race is on; never elsewhere.
_POLL = 0.0002


class Restorer:
    def __init__(self, victim: Path, keep: Path) -> None:
        os.link(victim, keep)
        self.victim = victim
        self.keep = keep
        original = identity_of(victim)
        assert original is not None
        self.original = original
        self._content = keep.read_bytes()
        self.taken = 0
        self.failures: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="mcp-audit-restorer", daemon=True)

    def __enter__(self) -> Restorer:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.settle()

    async def counted(self) -> int:
        """`settle`, for a caller that counts effects the same way whatever the subject."""
        return self.settle()

    def settle(self) -> int:
        """Look once more (the last effect may be a moment old); how many effects so far."""
        self._check()
        return self.taken

    def _watch(self) -> None:
        while not self._stop.is_set():
            self._check()
            time.sleep(_POLL)

    def _check(self) -> None:
        with self._lock:
            current = identity_of(self.victim)
            if current == self.original or self.failures:
                return
            try:
                self._restore(current is not None and current.ino == self.original.ino, current is not None)
            except OSError as exc:
                # Given up on: what is left on disk is then judged as it is.
                self.failures.append(f"could not put the victim back: {type(exc).__name__}: {exc}")
                return
            self.taken += 1

    def _restore(self, same_inode: bool, present: bool) -> None:
        if same_inode:
            # Changed in place (truncated, rewritten): the bytes and times back.
            self.keep.write_bytes(self._content)
            os.utime(self.keep, ns=(self.original.mtime_ns, self.original.mtime_ns))
            return
        if present:
            os.unlink(self.victim)  # something else in its place: the original goes back
        self.victim.parent.mkdir(parents=True, exist_ok=True)
        os.link(self.keep, self.victim)
