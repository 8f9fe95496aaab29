"""Opening a file under the root, and never anything outside it.

The target owns the root and may have replaced any folder on the way with a
symbolic link to somewhere else (a home directory, a key). Each component is
opened relative to the one before it with O_NOFOLLOW, so no link is followed,
in the root or out of it, and nothing changed between a check and an open can
lead the read elsewhere. A link is reported as a link: that it appeared is
itself something the target did.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


def relative_path(value: str) -> PurePosixPath:
    """`value` as a path below the root, or a ValueError saying why it is not one."""
    if not value or "\0" in value:
        raise ValueError("a path must be a non-empty string")
    path = PurePosixPath(value)
    if path.is_absolute():
        raise ValueError(f"{value!r} is absolute; name a file relative to the root, e.g. 'ledger.json'")
    if ".." in path.parts:
        raise ValueError(f"{value!r} leaves the root ('..'); the harness reads only inside its sandbox")
    if not path.parts:
        raise ValueError(f"{value!r} is the root itself; name a file in it")
    return path


@dataclass(frozen=True, slots=True)
class Unread:
    """Why there is no file to read at a path: the value a probe reports instead of content."""

    # "symlink", "not a directory", "not readable", "directory", "fifo", "socket", "device"
    what: str
    where: str  # the component that stopped the walk, relative to the root
    link: str | None = None  # what a link points to, as text; it is never followed

    def as_value(self) -> dict[str, str]:
        value = {"unread": self.what, "at": self.where}
        if self.link is not None:
            value["link"] = self.link
        return value


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO the target left there must not wait for a writer.
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def open_beneath(root: Path, relative: PurePosixPath) -> int | Unread | None:
    """A read-only descriptor of a regular file below `root`; None when it does not exist.

    The caller closes the descriptor. `root` itself is the harness's and may be
    reached through a link (a temporary folder often is); nothing below it may.
    """
    parts = relative.parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            where = "/".join(parts[: depth + 1])
            try:
                child = os.open(part, _FILE if last else _DIRECTORY, dir_fd=fd)
            except FileNotFoundError:
                return None
            except OSError as exc:
                return _why_not(fd, part, where, exc)
            os.close(fd)
            fd = child
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            return Unread(_kind(mode), "/".join(parts))
        result, fd = fd, -1
        return result
    finally:
        if fd >= 0:
            os.close(fd)


def _why_not(parent: int, part: str, where: str, exc: OSError) -> Unread:
    try:
        st = os.lstat(part, dir_fd=parent)
    except OSError:
        raise exc from None
    if stat.S_ISLNK(st.st_mode):
        return Unread("symlink", where, os.readlink(part, dir_fd=parent))
    if exc.errno == errno.ENOTDIR:
        return Unread("not a directory", where)
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Unread("not readable", where)  # a target may chmod what it owns
    raise exc


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


def read_capped(fd: int, cap: int) -> tuple[bytes, int]:
    """Up to `cap` bytes of an open file, and its size; the descriptor is closed."""
    try:
        size = os.fstat(fd).st_size
        chunks: list[bytes] = []
        left = cap
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), size
    finally:
        os.close(fd)
