"""Linux inotify through ctypes: which watched directories saw a change since the last look.

The kernel queues an event while the system call that made the change runs,
so once a target has answered, every change it made before answering is in
the queue. Each event names the entry that changed: the watched directory it happened in
and the entry's name there (a change to a directory itself is also reported to
the directory, without a name).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import struct
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

# Everything that can change an entry's identity (device, inode, size, mtime),
# add or remove one. Reads and opens are left out: they change nothing. A close
# after writing is kept: writes through a shared mapping raise no IN_MODIFY.
CHANGES = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len
# How os.fsencode and os.fsdecode turn a name into bytes and back (what they read once, at import).
_FS_ENCODING, _FS_ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


_READ_SIZE = 65536
# The largest event: its 16-byte header and a name of NAME_MAX bytes, a NUL and padding (256 bytes).
_LARGEST_EVENT = 16 + 256


def _queued(fd: int) -> Iterator[bytes]:
    """What the kernel has queued on an inotify descriptor opened non-blocking, read until it is empty.

    A read hands over every queued event that fits: one that left room for the largest
    event found the queue empty, so no read that would only say so (EAGAIN) follows it.
    An event queued after it waits for the next drain, as one queued after that read would.
    """
    while True:
        try:
            data = os.read(fd, _READ_SIZE)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno != errno.EINTR:
                raise
            continue
        yield data
        if len(data) <= _READ_SIZE - _LARGEST_EVENT:
            return


@dataclass
class Changes:
    """Since the last drain: the entries an event named (`directory/name`, or a directory)."""

    entries: set[str] = field(default_factory=set)
    # Events were lost (the queue overflowed): anything may have changed.
    overflowed: bool = False


@functools.cache
def _c_library() -> ctypes.CDLL:
    """The C library, loaded once: `find_library` runs `ldconfig -p` in a new process each time it is asked."""
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _close_aside(fd: int) -> None:
    """Close an inotify descriptor on a thread of its own, so the caller does not wait for the kernel.

    The last close of an instance returns only once the kernel has torn its watches
    down, after a grace period of its own (7 to 50 ms measured, with no CPU used):
    an audit closes three, one of them on its event loop. The descriptor is closed
    all the same, a moment later; nothing reads it again.
    """
    if sys.is_finalizing():
        # An instance dropped as the interpreter ends: a thread started now would never run, and
        # starting it would wait for it forever (the process would never exit).
        os.close(fd)
        return
    try:
        threading.Thread(target=os.close, args=(fd,), name="mcp-audit-inotify-close", daemon=True).start()
    except RuntimeError:  # the interpreter is shutting down: no new thread
        os.close(fd)


class _Instance:
    """One inotify instance of this process, closed with `close` or when dropped."""

    def __init__(self) -> None:
        self._libc = _c_library()
        fd = self._libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._fd: int | None = fd

    def _opened(self) -> int:
        assert self._fd is not None
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            _close_aside(self._fd)
            self._fd = None

    def __del__(self) -> None:
        # One dropped without `close` must not hold one of the user's few inotify
        # instances (128 by default) for the rest of the process.
        self.close()


class Watcher(_Instance):
    """Directory watches, each named as the scanner names the directory."""

    def __init__(self) -> None:
        super().__init__()
        self._names: dict[int, str] = {}

    def watch(self, name: str, path: str) -> None:
        """Watch the directory at `path` (never through a link); raises OSError if it cannot."""
        # os.fsencode's own encoding, called directly: every directory of the tree is watched.
        encoded = path.encode(_FS_ENCODING, _FS_ERRORS)
        wd = self._libc.inotify_add_watch(self._fd, encoded, CHANGES | IN_ONLYDIR | IN_DONT_FOLLOW)
        if wd < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"inotify_add_watch {path}: {os.strerror(code)}")
        # A directory moved within the tree keeps its watch: it now answers to its new name.
        self._names[wd] = name

    def drain(self) -> Changes:
        changes = Changes()
        assert self._fd is not None
        names = self._names
        # A file written gets three events (created, modified, closed): each entry is named once.
        # Its name is kept as the kernel pads it (a name is always padded alike) and decoded once.
        named: set[tuple[str, bytes]] = set()
        last: tuple[str, bytes] | None = None
        for data in _queued(self._fd):
            # Every snapshot reads every event: the records (a 16-byte header, then a name padded
            # to a multiple of 16) are read as 32-bit words, with no call per field. The watch
            # descriptor reads unsigned: an overflow's -1 is no watch of ours either way.
            words = memoryview(data).cast("I")
            offset, end = 0, len(data)
            while offset < end:
                at = offset >> 2
                wd, mask, size = words[at], words[at + 1], words[at + 3]
                start = offset + _HEADER.size
                offset = start + size
                if mask & IN_Q_OVERFLOW:
                    changes.overflowed = True
                    continue
                if wd not in names:
                    continue
                if mask & IN_IGNORED:  # the directory is gone, and its watch with it
                    del names[wd]
                    continue
                entry = (names[wd], data[start:offset])
                if entry != last:  # a file written: its three events come in a row, added once
                    named.add(entry)
                    last = entry
        stripped = [(directory, padded.rstrip(b"\0")) for directory, padded in named]
        # os.fsdecode, called directly.
        changes.entries = {
            f"{directory}/{entry.decode(_FS_ENCODING, _FS_ERRORS)}" if entry else directory
            for directory, entry in stripped
        }
        return changes


IN_CLOSE_NOWRITE = 0x00000010
IN_OPEN = 0x00000020


@dataclass(frozen=True, slots=True)
class Opened:
    """Since the last drain, on one file: how often it was opened and closed, and closed after writing."""

    opens: int = 0
    closes: int = 0
    # Closes of a descriptor opened for writing (IN_CLOSE_WRITE): a writer done with the file.
    written: int = 0
    # Written to (IN_MODIFY): by whom, the events do not say.
    modified: bool = False
    overflowed: bool = False


class FileWatch(_Instance):
    """One file's opens, writes and closes, through whichever of its links they happen (the watch is on its inode)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        fd = self._opened()
        mask = IN_OPEN | IN_MODIFY | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | IN_DONT_FOLLOW
        if self._libc.inotify_add_watch(fd, os.fsencode(path), mask) < 0:
            code = ctypes.get_errno()
            self.close()
            raise OSError(code, f"inotify_add_watch {path}: {os.strerror(code)}")

    def drain(self) -> Opened:
        opens = closes = written = 0
        modified = overflowed = False
        assert self._fd is not None
        for data in _queued(self._fd):
            offset = 0
            while offset < len(data):
                _, mask, _, size = _HEADER.unpack_from(data, offset)
                offset += _HEADER.size + size
                overflowed |= bool(mask & IN_Q_OVERFLOW)
                modified |= bool(mask & IN_MODIFY)
                opens += bool(mask & IN_OPEN)
                closes += bool(mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE))
                written += bool(mask & IN_CLOSE_WRITE)
        return Opened(opens, closes, written, modified, overflowed)
