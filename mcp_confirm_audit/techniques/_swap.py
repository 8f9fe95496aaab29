"""The one flow every swap family shares: ask, change the disk, then say yes.

The swap is done by the harness, so it is not the target's doing: the oracle's
snapshot is taken after it, and only what the target does with the answer is
judged. Every change is real (links, renames, writes on the real filesystem).
Over a token or pending flow the preview is the question and the confirming
step the answer: the swap comes between them, and a human who approves a
pending action approves what they saw in the preview. Over a waits flow there
is one call: the person reads the question while it waits (a terminal prompt,
a message on their phone), and the swap comes after they read it and before
they say yes, the call still under way.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..confirmations import AgentFlow, HumanFailed, as_flow
from ._flows import AttackChannel, previewed
from .base import Attack


async def swap_between_question_and_answer(attack: Attack, victim: Path, swap: Callable[[], str]) -> None:
    """Round one about `victim`, then `swap()` (which says what it did), then accept."""
    if not attack.file_only():
        return
    flow = as_flow(attack.plan.mechanism)
    if flow is not None and flow.waits_for_person:
        await _swap_while_the_person_reads(attack, flow, victim, swap)
        return
    if flow is not None:
        await _swap_between_preview_and_confirm(attack, flow, victim, swap)
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


async def _swap_between_preview_and_confirm(
    attack: Attack, flow: AgentFlow, victim: Path, swap: Callable[[], str]
) -> None:
    channel, args = AttackChannel(attack), attack.arguments(victim)
    shown = await previewed(attack, flow, channel, args)
    if shown is None:
        return
    attack.note(swap())
    await attack.start_attack()
    try:
        await flow.confirm(channel, args, shown.handle)
    except HumanFailed as exc:
        attack.setup_failed(str(exc))


async def _swap_while_the_person_reads(
    attack: Attack, flow: AgentFlow, victim: Path, swap: Callable[[], str]
) -> None:
    swapped = False

    async def after_reading() -> None:
        nonlocal swapped
        attack.note(swap())
        swapped = True
        # The oracle's snapshot after the swap: only what the target does with the yes is judged.
        await attack.start_attack()

    # The one call is the attack proper; its snapshot is taken once the person has read the question.
    attack.attack_under_way()
    try:
        await flow.confirm_once_read(AttackChannel(attack), attack.arguments(victim), after_reading)
    except HumanFailed as exc:
        attack.setup_failed(str(exc))
        return
    if not swapped:
        attack.setup_failed("the call ended before the person was asked, so nothing was swapped")


def replace_with_link(path: Path, destination: Path | str) -> None:
    """Atomically put a symbolic link to `destination` where `path` was (rename(2) over it)."""
    staged = path.with_name(f".{path.name}.swap")
    os.symlink(destination, staged)
    os.replace(staged, path)


def sandbox_name(attack: Attack, path: Path) -> str:
    """How the effect oracle names `path` ("root/…" also when a running server serves the root)."""
    return attack.case.rel(path)
