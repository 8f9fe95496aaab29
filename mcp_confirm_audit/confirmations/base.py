"""The protocol every confirmation mechanism speaks, and what it talks through."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..channels.human import HumanFailed, Step
from ..models import Response
from . import values

__all__ = ["AgentFlow", "Channel", "HumanFailed", "Mechanism", "Preview"]


class Channel(Protocol):
    """Where a mechanism's calls go, recorded by whoever runs it (the controls, an attack)."""

    async def call(
        self, label: str, tool: str, arguments: Mapping[str, Any], *, unanswered: bool = False
    ) -> Response:
        """One tools/call on the agent's own connection; `unanswered`: nobody answers while it waits."""
        ...

    async def human(
        self,
        label: str,
        steps: Sequence[Step],
        values: Mapping[str, str],
        *,
        before_answer: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, str]:
        """The person, on a channel of their own: take `steps` with `values` filled in; what they saved.

        Raises HumanFailed when a step could not be taken. What each step showed the person is kept
        by the channel (`shown`), for the checks on what the person read. `before_answer`: what the
        harness changes once the person has read the question, before they answer.
        """
        ...


@dataclass(frozen=True, slots=True)
class Preview:
    """The first call of a flow: what came back, and the handle (token, pending id) it gave."""

    response: Response
    handle: str | None = None
    # The result field the handle was read from.
    field: str | None = None

    @classmethod
    def read(cls, response: Response, name: str | None, pattern: re.Pattern[str]) -> Preview:
        """The preview, its handle taken from the field `name` (or the first named like `pattern`)."""
        found = values.find(response, name, pattern)
        return cls(response, found[1], found[0]) if found else cls(response)


class Mechanism(Protocol):
    """How one tool asks before it acts."""

    @property
    def kind(self) -> str: ...

    @property
    def tool(self) -> str: ...

    def describe(self) -> str:
        """One line for evidence and reasons."""
        ...

    def for_tool(self, tool: str) -> Mechanism:
        """The same mechanism on another tool (a profile states it once for every tool)."""
        ...


class AgentFlow(Mechanism, Protocol):
    """A mechanism the harness can drive end to end: every mechanism but MRTR's rounds."""

    async def preview(self, channel: Channel, arguments: Mapping[str, Any]) -> Preview:
        """The call that must not act: it previews, stages or refuses, and may hand out a handle."""
        ...

    async def confirm(
        self,
        channel: Channel,
        arguments: Mapping[str, Any],
        handle: str | None,
        *,
        tool: str | None = None,
        as_agent: bool = False,
    ) -> Response:
        """The honest confirming step for `handle` (on `tool`); `as_agent`: only what the agent's connection can do."""
        ...
