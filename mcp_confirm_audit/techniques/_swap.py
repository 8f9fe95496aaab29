"""The one flow every swap family shares: ask, change the disk, then say yes.

The swap is done by the harness, so it is not the target's doing: the oracle's
snapshot is taken after it, and only what the target does with the answer is
judged. Every change is real (links, renames, writes on the real filesystem).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .base import Attack


async def swap_between_question_and_answer(attack: Attack, victim: Path, swap: Callable[[], str]) -> None:
    """Round one about `victim`, then `swap()` (which says what it did), then accept."""
    if not attack.file_only():
        return
    first = await attack.ask(victim)
    if attack.failed:
        return
    attack.note(swap())
    await attack.start_attack()
    await attack.call(
        "accept, as the user who saw the question would",
        victim,
        state=first.request_state,
        responses=attack.accept(first, victim),
    )


def replace_with_link(path: Path, destination: Path | str) -> None:
    """Atomically put a symbolic link to `destination` where `path` was (rename(2) over it)."""
    staged = path.with_name(f".{path.name}.swap")
    os.symlink(destination, staged)
    os.replace(staged, path)


def sandbox_name(attack: Attack, path: Path) -> str:
    """How the effect oracle names `path` ("root/…" also when a running server serves the root)."""
    return attack.case.rel(path)
