"""Removing a sandbox: everything below a directory, never through a link.

What `shutil.rmtree(path, ignore_errors=True)` does, with fewer steps for each
entry: a sandbox holds every case of the run, some seven hundred entries, and
the audit waits for it to go.

The property that matters is kept the way rmtree keeps it (walking by
descriptors): every directory is opened relative to its parent's descriptor,
by its bare name, with `O_NOFOLLOW | O_DIRECTORY`. A link (or anything that is
not a directory), even one swapped in by a hostile target between the listing
and the open, is refused by the kernel rather than followed, and is then
unlinked as the link it is: nothing outside `path` is listed, let alone
removed. rmtree proves the same with an lstat before each open and an fstat
after it; the flags make the kernel prove it in the open itself. Errors are
ignored, as `ignore_errors=True` does: whatever cannot be removed stays.

The walk keeps its own stack (a hostile target may build a deep tree), one
descriptor per level. Where the system has no descriptor-relative calls,
rmtree does the work.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# What the walk needs of the system: the same test rmtree makes before it walks by descriptors.
_BY_DESCRIPTOR = {os.open, os.unlink, os.rmdir} <= os.supports_dir_fd and os.scandir in os.supports_fd


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove the directory `path` and everything below it; links are removed, never followed."""
    if not _BY_DESCRIPTOR:
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        top = os.open(path, _DIRECTORY)
    except OSError:  # gone, a link, or not a directory: rmtree leaves those alone too
        return
    try:
        _empty(top)
    finally:
        os.close(top)
    with contextlib.suppress(OSError):  # not empty (something could not go): it stays
        os.rmdir(path)


def _entries(fd: int) -> Iterator[tuple[str, bool]]:
    """The names in the directory open as `fd`, each with whether it is a directory (not a link to one)."""
    try:
        with os.scandir(fd) as listing:
            # Listed whole before anything is removed from it.
            return iter([(entry.name, entry.is_dir(follow_symlinks=False)) for entry in listing])
    except OSError:  # made unreadable: what is in it stays
        return iter(())


def _empty(top: int) -> None:
    """Remove everything in the directory open as `top`, depth first."""
    # Each level: its descriptor, what is left to remove in it, and its name in the level above.
    stack: list[tuple[int, Iterator[tuple[str, bool]], str]] = [(top, _entries(top), "")]
    try:
        while stack:
            fd, entries, own_name = stack[-1]
            for name, is_dir in entries:
                if is_dir:
                    try:
                        child = os.open(name, _DIRECTORY, dir_fd=fd)
                    except OSError:
                        pass  # gone, or no longer a directory (a link swapped in): unlinked as what it is
                    else:
                        stack.append((child, _entries(child), name))
                        break  # emptied first, then removed when its level is done
                try:
                    os.unlink(name, dir_fd=fd)
                except OSError:  # gone already, or a directory that could not be opened: it stays
                    continue
            else:
                # Nothing left at this level: close it and remove it from the level above.
                stack.pop()
                if stack:
                    os.close(fd)
                    try:
                        os.rmdir(own_name, dir_fd=stack[-1][0])
                    except OSError:  # not empty (something could not go): it stays
                        continue
    finally:  # stopped on the way (an interrupt): no descriptor left open
        for fd, _, _ in stack[1:]:
            os.close(fd)
