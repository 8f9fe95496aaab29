"""The string arguments of an action that names no file, as what the person reads shows them.

A family whose hostile text goes into the action's arguments (prompt-forging) finds
the strings whose plain value is in the question, the action's own or those its
setup calls staged, and makes uses of the action with one of them set to its text.
"""

from __future__ import annotations

from dataclasses import replace

from ..engine.action import Instance
from .base import Attack

__all__ = ["ArgumentSubject", "Where", "shown_arguments"]

# An argument the question shows: its setup call's index (None: the action's own), its name, its plain value.
Where = tuple[int | None, str, str]


def shown_arguments(attack: Attack, victim: Instance, baseline: str) -> list[Where]:
    """The strings of the action (then of its setup calls) whose plain value is in what the person read."""
    # Where the question's text comes from: the gated call's own strings, else (a handle)
    # the strings its setup call staged, which the question quotes back.
    handles = {str(v) for v in victim.saved.values()}
    shown: list[Where] = [
        (None, k, v)
        for k, v in victim.arguments.items()
        if isinstance(v, str) and v and v in baseline and v not in handles  # a handle is a lookup, not text
    ]
    for index, step in enumerate(attack.plan.setup):
        shown += [(index, k, v) for k, v in step.args.items() if isinstance(v, str) and v and v in baseline]
    return sorted(shown, key=lambda where: where[0] is not None)


class ArgumentSubject:
    """One use of the action with one string (its own, or staged by a setup call) set to another value."""

    def __init__(self, attack: Attack, victim: Instance, where: Where) -> None:
        self.attack, self.victim, (self.step, self.argument, _) = attack, victim, where
        self.staged = self.unstaged = 0

    async def __call__(self, value: str) -> Instance | None:
        if self.step is None:
            return replace(self.victim, arguments={**self.victim.arguments, self.argument: value})
        staged = await self.attack.staged_with(self.step, self.argument, value)
        if staged is None:
            self.unstaged += 1
        else:
            self.staged += 1
        return staged

    def never_staged(self) -> None:
        """No hostile value ever got past the setup call: nothing about the question was tested."""
        if self.step is not None and self.unstaged and not self.staged:
            tool = self.attack.plan.setup[self.step].tool
            self.attack.setup_failed(
                f"{tool} refused every hostile {self.argument!r} ({self.unstaged} tried), so no question "
                "about one was ever asked; stage it with a value the setup call accepts"
            )
