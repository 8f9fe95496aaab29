r"""`waits`: the call itself waits while a person answers on a channel of their own, then acts or refuses.

    tty: true
    confirmation:
      kind: waits
      waits:
        human:   [{terminal: {expect: 'allow\? \[y/N\]', answer: y}}]
        decline: [{terminal: {expect: 'allow\? \[y/N\]', answer: n}}]

A terminal prompt (`allow? [y/N]` on the server's `/dev/tty`), a push to a
paired phone the server waits on: the agent sees one call, and a person is
asked while it is under way. The harness sends the call and takes the
person's steps at the same time; the call with the person saying no is the
preview, the one that must not act, and the call with them saying yes is the
confirmation. An action a person approved this way is asked, never "acted
without asking".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import anyio

from ..channels.human import Person
from ..channels.terminal import Forget
from ..models import Response
from .base import Channel, FlowDefaults, HumanFailed, Preview


@dataclass(frozen=True, slots=True)
class Waits(FlowDefaults):
    tool: str = ""
    human: Person | None = None
    source: str = "profile"

    @property
    def kind(self) -> str:
        return "waits"

    def describe(self) -> str:
        return "waits: the call waits while a human answers on a channel of their own, then acts or refuses"

    def for_tool(self, tool: str) -> Waits:
        return replace(self, tool=tool)

    @property
    def waits_for_person(self) -> bool:
        return True

    @property
    def waits_on(self) -> Person | None:
        return self.human

    @property
    def asks_a_person(self) -> bool:
        return True

    async def preview(self, channel: Channel, arguments: Mapping[str, Any]) -> Preview:
        """The call while the person says no (or, with no way to say no given, says nothing)."""
        steps = self.human.decline if self.human is not None else None
        # A "no" the person could not give (no prompt came) still leaves a call that must not act.
        response, _ = await self._during(channel, "while the human declines", arguments, steps or ())
        return Preview(response)

    async def confirm(
        self,
        channel: Channel,
        arguments: Mapping[str, Any],
        handle: str | None,
        *,
        tool: str | None = None,
        as_agent: bool = False,
        before_answer: Callable[[], Awaitable[None]] | None = None,
    ) -> Response:
        """The call while the person approves; `before_answer`: the harness's change once they have
        read the question and before they say yes (the file they were shown swapped, say)."""
        if as_agent or self.human is None:
            response, _ = await self._during(channel, "with nobody answering", arguments, (), tool)
            return response
        response, failed = await self._during(
            channel, "while the human approves", arguments, self.human.approve, tool, before_answer
        )
        if failed is not None:
            raise failed
        return response

    async def confirm_once_read(
        self, channel: Channel, arguments: Mapping[str, Any], between: Callable[[], Awaitable[None]]
    ) -> Response:
        return await self.confirm(channel, arguments, None, before_answer=between)

    async def _during(
        self,
        channel: Channel,
        label: str,
        arguments: Mapping[str, Any],
        steps: tuple[Any, ...],
        tool: str | None = None,
        before_answer: Callable[[], Awaitable[None]] | None = None,
    ) -> tuple[Response, HumanFailed | None]:
        """The call, with the person's steps taken while it waits; what it answered, and a step that failed."""
        failed: list[HumanFailed] = []

        async def person() -> None:
            try:
                await channel.human(label.removeprefix("while "), steps, {}, before_answer=before_answer)
            except HumanFailed as exc:
                failed.append(exc)

        # A prompt left by a call the harness gave up on is not this call's.
        await channel.human("", (Forget(),), {})
        async with anyio.create_task_group() as group:
            if steps:
                group.start_soon(person)
            # Nobody answering: the call may take the target's own deadline for its person.
            response = await channel.call(label, tool or self.tool, arguments, unanswered=not steps)
            # The call is over: a person still waiting for a prompt was never asked.
            group.cancel_scope.cancel()
        # What its terminal showed belonged to it (a prompt nobody answered is not the next call's).
        await channel.human("", (Forget(),), {})
        return response, failed[0] if failed else None
