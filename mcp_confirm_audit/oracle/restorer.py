"""Putting the victim back, with the identity the user confirmed, whenever it goes.

A second redemption of one approval that slipped past a single-use check
would find nothing left to act on, and be refused by a later check that says
nothing about single use. A hard link keeps the victim's inode alive; a thread
watching the disk links it back the moment it is removed (or writes its bytes
and times back if it was changed in place), so the victim is always there with
the same device, inode, size and mtime, and every effect is counted.

A change in place is counted once its writers are done with it. A writer that
opens the file with O_TRUNC and then writes changes it twice; a look between
the two, put back at once, would count the write that follows as a second
effect. So the restorer watches the victim's inode (`inotify.FileWatch`): a
change in place is put back only when nothing holds the file open (every open
seen has been closed), and it counts one effect per close after writing
(IN_CLOSE_WRITE) since the file was last as confirmed: two writers at once are
two; a file opened for writing and closed unchanged is none; a change made with
no descriptor (a truncate(2) by name) is one. It writes the bytes back through
a descriptor it opened before watching, so its own writes open and close
nothing. Without inotify it puts every change back at once, as before. A
removal or a replacement is put back at once either way: the next redemption
needs the file.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from types import TracebackType

from .inotify import FileWatch
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
        # Descriptors open on the victim that its watch saw opened and not yet closed; closes after
        # writing since the victim was last as confirmed.
        self._open = 0
        self._written = 0
        self._fd: int | None = None
        self._opens: FileWatch | None = None
        try:
            self._fd = os.open(keep, os.O_RDWR | os.O_CLOEXEC)  # opened before the watch: never seen by it
            self._opens = FileWatch(str(keep))
        except OSError:  # no inotify here (or no instance left): every change is put back at once
            self._close_fd()
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
        try:
            self.settle()
        finally:  # a look after this (`settle` again) puts back at once what it finds, as without inotify
            if self._opens is not None:
                self._opens.close()
                self._opens = None
            self._close_fd()

    async def counted(self) -> int:
        """`settle`, for a caller that counts effects the same way whatever the subject."""
        return self.settle()

    def settle(self) -> int:
        """Look once more (the last effect may be a moment old); how many effects so far.

        Called once every call of a step has answered: a change in place still open for writing
        then is counted as it stands.
        """
        self._check(settled=True)
        return self.taken

    def look(self) -> None:
        """One look, as the watching thread takes them: a change in place waits for its writer."""
        self._check()

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.look()
            time.sleep(_POLL)

    def _check(self, settled: bool = False) -> None:
        with self._lock:
            # Looked at before the events are read: a close read now may end a change this look missed.
            current = identity_of(self.victim)
            written_since = self._opened() if self._opens is not None else True
            if current == self.original or self.failures:
                if not written_since:
                    self._written = 0  # opened for writing, closed, nothing written: no effect
                return
            in_place = current is not None and current.ino == self.original.ino
            if in_place and self._open and not settled:
                # Still open (a writer truncated it and is yet to write, or another is mid-write):
                # put back once nobody holds it, each write closed meanwhile one effect.
                return
            effects = max(self._written, 1) if in_place else 1
            try:
                self._restore(in_place, current is not None)
            except OSError as exc:
                # Given up on: what is left on disk is then judged as it is.
                self.failures.append(f"could not put the victim back: {type(exc).__name__}: {exc}")
                return
            self.taken += effects
            self._written = 0
            if self._opens is not None:
                self._opened()  # the restorer's own writes: what they wrote is not another's

    def _opened(self) -> bool:
        """Read the victim's events: how many hold it open, the writes closed; whether it was written to."""
        assert self._opens is not None
        seen = self._opens.drain()
        self._open = 0 if seen.overflowed else max(self._open + seen.opens - seen.closes, 0)
        self._written += seen.written
        return seen.modified or seen.overflowed

    def _restore(self, same_inode: bool, present: bool) -> None:
        if same_inode:
            # Changed in place (truncated, rewritten): the bytes and times back.
            if self._fd is None:
                self.keep.write_bytes(self._content)
                os.utime(self.keep, ns=(self.original.mtime_ns, self.original.mtime_ns))
                return
            os.pwrite(self._fd, self._content, 0)
            os.ftruncate(self._fd, len(self._content))
            os.utime(self._fd, ns=(self.original.mtime_ns, self.original.mtime_ns))
            return
        if present:
            os.unlink(self.victim)  # something else in its place: the original goes back
        self.victim.parent.mkdir(parents=True, exist_ok=True)
        os.link(self.keep, self.victim)

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
