"""Counting the effects of a race on an action that names no file: every effect stays, and is counted.

(A case file is counted by `restorer.Restorer`, which puts it back after every effect.)
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable


class EffectCounter:
    """For an action that names no file: nothing to put back, every effect stays and is counted.

    A second payment is a new row, not the same file gone twice. One effect may
    show in several places (a row of `list_payments` and a request at the sink;
    a joint's angle and a row in its move log), so the count is the most new
    or changed items any one place shows: rows of one list, requests at the
    sink, a file.
    """

    def __init__(self, since_start: Callable[[], Awaitable[list[str]]], unit: int = 1) -> None:
        self._since_start = since_start
        # How many items one honest effect of this action changed (the approve control's): a race
        # is counted in that unit, so one apply that rewrites six lines of a state file is one effect.
        self.unit = max(unit, 1)
        self.failures: list[str] = []

    def __enter__(self) -> EffectCounter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    async def counted(self) -> int:
        return -(-count_items(await self._since_start()) // self.unit)


def count_items(changes: Iterable[str]) -> int:
    """How many actions `changes` show, counted as items: the most new or gone items any one place shows.

    See `EffectCounter`; one action that changes several items of one place (a state file's lines)
    counts as several here: `EffectCounter` divides by what one honest action changed.
    """
    changes = list(changes)
    items = {_item(path) for path in changes if ":" in path.split("/", 1)[0] or path.startswith("sink")}
    for path in changes:
        # A file a probe reads by rows is counted by its rows, not once more as a file.
        inside = path.removeprefix("root/")
        if path.startswith(("root/", "outside/", "root-evil/")) and not any(
            item.startswith(f"file:{inside}") for item in items
        ):
            items.add(path)
    # One action may change a field of every existing row (a column added to a table): those
    # rows are its footprint, not repetitions. Only whole items, new or gone, count one each;
    # changed fields of existing items count once for their place.
    changed = {_item(path) for path in changes if _item(path) != path and path.startswith(_PROBED)}
    places: dict[str, set[str]] = {}
    for item in items:
        places.setdefault(_ROW.sub("[*]", item), set()).add(item)
    return max((_count(found, changed) for found in places.values()), default=0)


_ROW = re.compile(r"\[\d+\]")
# Where a change is named by its list item: a probe's rows (a tool, a file by rows, sqlite).
_PROBED = ("tool:", "file:", "sqlite:")


def _count(found: set[str], changed: set[str]) -> int:
    whole = found - changed
    return len(whole) + (1 if found & changed else 0)


def _item(path: str) -> str:
    """A change named down to the first list item it is in: one row, one request, one payment."""
    cut = path.find("]")
    return path[: cut + 1] if cut >= 0 else path
