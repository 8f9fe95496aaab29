"""Files that only grew: a log or a queue the target appends to on every call, asked or not.

The root's small files are read whole (`files`), and two readings compared
(`grown`): a file that is longer and starts with what it held before only grew
(appended to, or new); any other difference is a change. Zero configuration's
classification, its honest-flow search and a family with no honest flow each
learn bookkeeping from this.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def files(root: Path) -> dict[str, bytes]:
    """The root's small files by path relative to it: enough to tell a log that only grows."""
    found: dict[str, bytes] = {}
    try:
        paths = sorted(root.rglob("*"))[:400]
    except OSError:
        return found
    for path in paths:
        try:
            if path.is_file() and not path.is_symlink() and path.stat().st_size <= 1 << 20:
                found[path.relative_to(root).as_posix()] = path.read_bytes()
        except OSError:
            continue
    return found


def grown(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> tuple[set[str], set[str]]:
    """(files that only grew, appended to or new; files otherwise changed or removed)."""
    appended, changed = set(), set()
    for name in before.keys() | after.keys():
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        if now is not None and len(now) > len(was or b"") and now.startswith(was or b""):
            appended.add(name)
        else:
            changed.add(name)
    return appended, changed
