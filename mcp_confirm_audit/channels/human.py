"""The person on a channel of their own: the steps they take, read from a profile's `human:` list.

    human:                                   # a list of steps, in order
      - read: {from: sink, json: approve_url}
        save: link
      - follow: {link: link, method: POST}
    decline: [...]                           # how they say no, when the profile knows

Each kind of step is a module of this folder behind `base.Step`, its keys a
`base.StepKeys` model; this one gives the list's type (`steps_type`: the
union of every kind, and a check that every `{NAME}` is one a step before it
saves, or the harness's own), builds the steps from the validated list, and
takes them in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from ..profile.contract import Within
from .base import (
    HumanFailed,
    Step,
    StepKeys,
    Taken,
    Where,
    names_problem,
    server_of,
    step_union,
    take_all,
)
from .command import Command
from .http import METHODS, URL_NAMES, HttpCall, base_url, loopback_problem, url_problem

# Where a person who answers on another channel is written into a profile: a failed honest flow whose
# words point there says the fix is the person's channel, not the tool's arguments (`init` reads it so).
CHANNELS_PAGE = 'docs/how-to/channels.md, "Play the person on another channel"'

__all__ = [
    "CHANNELS_PAGE",
    "METHODS",
    "URL_NAMES",
    "Command",
    "HttpCall",
    "HumanFailed",
    "HumanStep",
    "Person",
    "Step",
    "Taken",
    "Where",
    "base_url",
    "loopback_problem",
    "names_problem",
    "parse_steps",
    "run",
    "server_of",
    "steps_type",
    "take_all",
    "url_problem",
]

HumanStep = Step
# What the harness itself fills in any step: the root, the target's URL, and what the flow handed out.
HARNESS_NAMES = ("root", "url", "id", "challenge", "token")


@dataclass(frozen=True, slots=True)
class Person:
    """How the person approves (steps in order), and how they decline if the profile says."""

    approve: tuple[Step, ...]
    decline: tuple[Step, ...] | None = None

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.approve + (self.decline or ())

    @property
    def looking(self) -> tuple[Step, ...]:
        """The first steps, up to the first that may approve: reads, and commands that only show."""
        kept: list[Step] = []
        for step in self.approve:
            if not (step.kind in ("read",) or getattr(step, "shows", False)):
                break
            kept.append(step)
        return tuple(kept)

    @property
    def shows_the_request(self) -> bool:
        """Whether a first step shows the person something: a read of what was sent them (not a secret
        they hold), or a command with `shows: true`. Without one, what they read before approving is unknown."""
        return any(not getattr(step, "secret", False) for step in self.looking)

    def withheld(self, name: str) -> bool:
        """Whether `name` is saved by a step that takes what only the person holds (a credential it
        names, a secret it reads, their own headers, their key): an agent alone never has it, where a
        value made from what it sees (a phrase from the id) it may work out."""
        for step in self.approve:
            if name in getattr(getattr(step, "save", None), "names", ()):
                return bool(
                    getattr(step, "credentials", ())
                    or getattr(step, "secret", False)
                    or getattr(step, "headers", ())
                    or step.kind == "sign"
                )
        return False

    def saves(self, name: str) -> bool:
        """Whether approving saves `name` (`evidence`, say) for the agent's confirming call."""
        return any(name in getattr(getattr(step, "save", None), "names", ()) for step in self.approve)


async def run(step: Step, where: Where) -> str:
    """Take one step on the person's channel: one line saying what was done and what came back."""
    return (await step.take(where)).said


def _names_known(steps: list[StepKeys | str]) -> list[StepKeys | str]:
    """Every `{NAME}` of a step is the harness's own or saved by a step before it."""
    names = list(HARNESS_NAMES)
    for index, item in enumerate(steps):
        text = item if isinstance(item, str) else item.templates()
        if problem := names_problem(text, names):
            raise Within(problem, index)
        if not isinstance(item, str):
            names.extend(item.saved().names)
    return steps


def steps_type() -> Any:
    """The type of a profile's `human:` list: at least one step, every `{NAME}` known where it is said."""
    step = step_union()
    return Annotated[list[step], Field(min_length=1), AfterValidator(_names_known)]  # type: ignore[valid-type]


def parse_steps(steps: Sequence[StepKeys | str], where: str) -> tuple[Step, ...]:
    """The steps a validated `human:` list says (a string is a command line); `where` names the list."""
    return tuple(
        Command(item) if isinstance(item, str) else item.built(f"{where}[{index}]")
        for index, item in enumerate(steps)
    )
