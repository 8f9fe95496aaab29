"""Counting the effects of a race on an action that names no file: every effect stays, and is counted.

(A case file is counted by `restorer.Restorer`, which puts it back after every effect.)
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable


class EffectCounter:
    """For an action that names no file: nothing to put back, every effect stays and is counted.

    A second payment is a new row, not the same file gone twice. One effect may
    show in several places (a row of `list_payments` and a request at the sink;
    a joint's angle and a row in its move log), so the count is the most new
    or changed items any one place shows: rows of one list, requests at the
    sink, a file.
    """

    def __init__(self, since_start: Callable[[], Awaitable[list[str]]]) -> None:
        self._since_start = since_start
        self.failures: list[str] = []

    def __enter__(self) -> EffectCounter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    async def counted(self) -> int:
        changes = await self._since_start()
        items = {_item(path) for path in changes if ":" in path.split("/", 1)[0] or path.startswith("sink")}
        for path in changes:
            # A file a probe reads by rows is counted by its rows, not once more as a file.
            inside = path.removeprefix("root/")
            if path.startswith(("root/", "outside/", "root-evil/")) and not any(
                item.startswith(f"file:{inside}") for item in items
            ):
                items.add(path)
        places: dict[str, set[str]] = {}
        for item in items:
            places.setdefault(_ROW.sub("[*]", item), set()).add(item)
        return max((len(found) for found in places.values()), default=0)


_ROW = re.compile(r"\[\d+\]")


def _item(path: str) -> str:
    """A change named down to the first list item it is in: one row, one request, one payment."""
    cut = path.find("]")
    return path[: cut + 1] if cut >= 0 else path
