"""A race the harness opens, announced on each of its redemptions.

Redemptions of one approval sent at once carry, in the request's `_meta`, how many of
them go to the same process. A server ignores it; the flawed reference servers size the
window their check-then-spend flaw already has with it (targets/reference/race_gate.py),
so the race is decided by a count, never by timing, and a lone redemption never waits.
"""

from __future__ import annotations

import contextvars
from typing import Any

ANNOUNCED = "io.github.mcp-confirm-audit/race"

_width: contextvars.ContextVar[int] = contextvars.ContextVar("mca_race_width", default=1)


def announce(width: int) -> None:
    """The calls of the current task are `width` redemptions sent at once to one process.

    Call it at the top of a task of its own (a task group's `start_soon`): the task's context is
    a copy, so the announcement ends with the task.
    """
    _width.set(max(width, 1))


def meta() -> dict[str, Any] | None:
    """The `_meta` a call of the current task carries: the race's width, or None outside a race."""
    width = _width.get()
    return {ANNOUNCED: {"width": width}} if width > 1 else None
