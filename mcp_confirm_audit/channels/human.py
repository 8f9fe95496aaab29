"""The person on a channel of their own: the steps they take, read from a profile's `human:` list.

    human:                                   # a list of steps, in order
      - read: {from: sink, json: approve_url}
        save: link
      - follow: {link: link, method: POST}
    decline: [...]                           # how they say no, when the profile knows

The old single steps (`{command: ...}`, `{http: {...}}`, and a decline given
as a command line) read as a list of one. Each kind of step is a module of
this folder behind `base.Step`; this one only reads the list, checks every
`{NAME}` is one a step before it saves (or the harness's own), and takes the
steps in order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .base import (
    SERVER_NAME,
    HumanFailed,
    Step,
    Taken,
    Where,
    check_names,
    parse_step,
    server_of,
    take_all,
)
from .command import Command
from .http import METHODS, URL_NAMES, HttpCall, base_url, loopback_problem, url_problem

__all__ = [
    "METHODS",
    "SERVER_NAME",
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
    "check_names",
    "loopback_problem",
    "parse_steps",
    "run",
    "saved_names",
    "server_of",
    "take_all",
    "url_problem",
]

HumanStep = Step
# What the harness itself fills in any step: the root, the target's URL, and what the flow handed out.
HARNESS_NAMES = ("root", "url", "id", "challenge", "token")
# Keys of a step whose text is a pattern to match, or read from the environment: never filled.
_NOT_FILLED = ("pattern", "expect", "headers")


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

    def saves(self, name: str) -> bool:
        """Whether approving saves `name` (`evidence`, say) for the agent's confirming call."""
        return any(name in getattr(getattr(step, "save", None), "names", ()) for step in self.approve)


async def run(step: Step, where: Where) -> str:
    """Take one step on the person's channel: one line saying what was done and what came back."""
    return (await step.take(where)).said


def parse_steps(
    raw: Any, where: str, fail: Any, source: str, known: Sequence[str] = HARNESS_NAMES
) -> tuple[Step, ...]:
    """A `human:` list (or one old-style step), every `{NAME}` checked against what is saved before it."""
    items = list(raw) if isinstance(raw, list) else [raw]
    if not items:
        raise fail(f"{where} must list at least one step")
    names, steps = list(known), []
    for number, item in enumerate(items, start=1):
        at = f"{where}[{number}]" if isinstance(raw, list) else where
        if isinstance(item, str):
            item = {"command": item}
        if not isinstance(item, Mapping):
            raise fail(f"{at} must be a mapping such as {{command: ...}} or {{read: ...}}, got {item!r}")
        step = parse_step(item, at, fail, source)
        check_names(_templates(item), names, at, fail)
        steps.append(step)
        names.extend(getattr(getattr(step, "save", None), "names", ()))
    return tuple(steps)


def saved_names(steps: Sequence[Step]) -> tuple[str, ...]:
    return tuple(n for step in steps for n in getattr(getattr(step, "save", None), "names", ()))


def _templates(item: Mapping[str, Any]) -> str:
    """The text of a step the harness fills in: not its patterns, its headers (`${ENV}`) or its saves."""
    kept = {
        key: {k: v for k, v in value.items() if k not in _NOT_FILLED} if isinstance(value, Mapping) else value
        for key, value in item.items()
        if key != "save"
    }
    return json.dumps(kept, default=str)
