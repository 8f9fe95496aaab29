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
from ..engine.action import Instance
from ..models import Outcome
from ._flows import AttackChannel, previewed
from .base import Attack
from .out_of_root import staged_path


async def swap_between_question_and_answer(attack: Attack, victim: Path, swap: Callable[[], str]) -> None:
    """Round one about `victim`, then `swap()` (which says what it did), then accept."""
    found = await _subject(attack, victim)
    if found is None:
        return
    await _swapped(attack, victim, found, swap)


async def _subject(attack: Attack, victim: Path) -> Path | Instance | None:
    """What the calls name: `victim` itself, or a use of the action whose setup call staged it.

    An action that names no file but a setup call does (`{path}`: propose a change, then apply
    it) is asked about the file through that call: a fresh use staged with `victim`'s path.
    """
    if attack.names_file:
        return victim
    where = staged_path(attack.plan.setup)
    if where is None:
        attack.file_only()  # not applicable, saying why
        return None
    step, argument, absolute = where
    value = str(victim) if absolute else os.path.relpath(victim, attack.sandbox.root)
    staged = await attack.staged_with(step, argument, value)
    if staged is None:
        attack.setup_failed(f"the setup call would not stage {value}: {attack.staging_failed[:200]}")
    return staged


async def _swapped(attack: Attack, victim: Path, subject: Path | Instance, swap: Callable[[], str]) -> None:
    flow = as_flow(attack.plan.mechanism)
    if flow is not None and flow.waits_for_person:
        await _swap_while_the_person_reads(attack, flow, subject, swap)
        return
    if flow is not None:
        await _swap_between_preview_and_confirm(attack, flow, victim, subject, swap)
        return
    before = await attack.exchange("ask", subject)
    first = before.response
    if first.outcome is not Outcome.INPUT_REQUIRED or not first.questions:
        attack.setup_failed(f"round one did not ask for confirmation ({first.outcome}: {first.text})")
    if attack.failed:
        return
    # The same call before the swap reached the gate: a refusal after it is about what the swap did.
    attack.before_the_change(attack.path_value(victim), [before], "was asked about")
    attack.note(swap())
    await attack.start_attack()
    await attack.call(
        "accept, as the user who saw the question would",
        subject,
        state=first.request_state,
        responses=attack.accept(first, subject),
    )


async def _swap_between_preview_and_confirm(
    attack: Attack, flow: AgentFlow, victim: Path, subject: Path | Instance, swap: Callable[[], str]
) -> None:
    channel, args = AttackChannel(attack), attack.arguments(subject)
    shown = await previewed(attack, flow, channel, args)
    if shown is None:
        return
    handed = f"was previewed and handed {shown.field or 'a handle'}"
    attack.before_the_change(attack.path_value(victim), channel.exchanges, handed)
    attack.note(swap())
    await attack.start_attack()
    try:
        await flow.confirm(channel, args, shown.handle)
    except HumanFailed as exc:
        attack.setup_failed(str(exc))


async def _swap_while_the_person_reads(
    attack: Attack, flow: AgentFlow, victim: Path | Instance, swap: Callable[[], str]
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
