"""The protocol every confirmation mechanism speaks, and what it talks through."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..channels.human import HumanFailed, Person, Step
from ..models import Response
from . import values

__all__ = ["AgentFlow", "Channel", "FlowDefaults", "HumanFailed", "Mechanism", "Preview"]


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
    # What the confirming call needs from this reply besides the handle and the reply lacks, said so the
    # profile can be fixed (a `{preview.NAME}` of `into:` the reply has no field for); None: nothing.
    missing: str | None = None

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

    # What every mechanism answers for itself, so no technique asks which one it holds.

    @property
    def own_tools(self) -> tuple[str, ...]:
        """Tools that are a step of this flow, not actions of their own (a preview, approve or execute tool)."""
        ...

    @property
    def own_arguments(self) -> tuple[str, ...]:
        """Arguments of the action that carry the confirmation itself (a token's, a flag's)."""
        ...


class AgentFlow(Mechanism, Protocol):
    """A mechanism the harness can drive end to end: every mechanism but MRTR's rounds.

    Besides the flow, each says what it is made of: who hands the agent an approval to redeem
    (`hands_over`), whether the call waits while the person answers (`waits_for_person`) and with
    which steps (`waits_on`), whether a person's approval is what it waits for (`asks_a_person`) or
    the caller's own argument (`caller_approves`), whether the approval acts by itself
    (`approval_acts_alone`), and the call that redeems an approval (`redemption`).
    """

    @property
    def hands_over(self) -> Person | None:
        """The person who approves on a channel of their own and hands the agent what it redeems; None if nobody."""
        ...

    @property
    def waits_for_person(self) -> bool:
        """The one call waits while the person answers elsewhere (a terminal prompt): no handle, no preview."""
        ...

    @property
    def waits_on(self) -> Person | None:
        """The person the one call waits on while they answer elsewhere (`waits_for_person`): their steps."""
        ...

    @property
    def asks_a_person(self) -> bool:
        """A person's approval is what the flow waits for (a human channel, a waiting call, a challenge)."""
        ...

    @property
    def caller_approves(self) -> bool:
        """The caller's own argument says it was approved (a flag)."""
        ...

    @property
    def approval_acts_alone(self) -> bool:
        """The person's approval is itself the action: no call of the agent's follows it."""
        ...

    @property
    def approves_a_handle(self) -> bool:
        """An approval is given for the handle the preview hands out (a token, a pending id)."""
        ...

    @property
    def stages(self) -> bool:
        """The call stages the action under an id until something approves it (a pending action)."""
        ...

    @property
    def staged_id_names(self) -> tuple[frozenset[str], bool]:
        """The argument names the flow's own calls give its staged id under (`invoice_id: "{id}"`), and
        whether an argument named like an action id may be it too (the id read from the first such field)."""
        ...

    @property
    def agent_presents_the_handle(self) -> bool:
        """Some call of the agent's presents the handle (to confirm, approve or execute)."""
        ...

    @property
    def redeems_the_persons_answer(self) -> bool:
        """What is redeemed is the person's answer (a challenge's), not the handle they were shown."""
        ...

    @property
    def token_in_the_call(self) -> bool:
        """The confirming call carries a token the preview handed the agent, in place of the preview: a
        value the agent could forge, replay or carry to another action (a token flow)."""
        ...

    @property
    def redemption_carries_the_action(self) -> bool:
        """The agent's call that redeems an approval carries the action's own arguments beside (or in place
        of) its handle: a token's confirming call, a pending action's gated call sent again. Another
        action's arguments can then be sent with one action's approval; a call that sends only the
        handle (`execute_pending(pending_id)`) names no action to swap."""
        ...

    def redemption(
        self, arguments: Mapping[str, Any], handle: str | None, saved: Mapping[str, str]
    ) -> tuple[str, dict[str, Any]] | None:
        """The agent's call that redeems the approval of `handle` with what the person `saved`: (tool,
        arguments); None when no call of the agent's redeems one."""
        ...

    async def confirm_once_read(
        self, channel: Channel, arguments: Mapping[str, Any], between: Callable[[], Awaitable[None]]
    ) -> Response:
        """The flow whose call waits while the person answers (`waits_for_person`), with `between` run once
        they have read the question and before they approve. A flow that does not wait has its question
        in its preview: change things between `preview` and `confirm` instead (HumanFailed here)."""
        ...

    async def approval(self, channel: Channel, handle: str) -> dict[str, str]:
        """The honest approval of `handle`, given once and nothing redeemed: what the person saved."""
        ...

    @property
    def person_declines(self) -> bool:
        """The person can say no to a handle on their channel (`decline` takes their steps)."""
        ...

    async def decline(self, channel: Channel, handle: str) -> bool:
        """The person says no to `handle` on their channel; False when the flow gives no way to."""
        ...

    async def preview(self, channel: Channel, arguments: Mapping[str, Any]) -> Preview:
        """The call that must not act: it previews, stages or refuses, and may hand out a handle."""
        ...

    def preview_of(self, response: Response) -> Preview:
        """A reply to a call of the gated tool read as this flow reads its preview: the handle it hands
        out (by the profile's `id_from`, `id_pattern` or `token_from`, or the field detection names), kept
        nowhere. What `preview` reads, for the replies a technique sends itself (a chained command line)."""
        ...

    def reads_its_preview(self, arguments: Mapping[str, Any]) -> bool:
        """The confirming call of a use with `arguments` carries a field of that use's preview reply besides
        its handle (a token flow's `{preview.change_id}`): a use not previewed in this world has none to carry."""
        ...

    def forget(self) -> None:
        """A fresh world began: drop the replies kept from the calls before it (a preview's change id).

        They name what the old world held; the new one never had it, and a call carrying it is about
        nothing there.
        """
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


class FlowDefaults:
    """The answers most mechanisms give to the vocabulary: each mechanism overrides only where it differs.

    Nobody hands anything over, nothing waits, no person is asked, nothing is staged or redeemed.
    """

    __slots__ = ()

    @property
    def own_tools(self) -> tuple[str, ...]:
        return ()

    @property
    def own_arguments(self) -> tuple[str, ...]:
        return ()

    @property
    def hands_over(self) -> Person | None:
        return None

    @property
    def waits_for_person(self) -> bool:
        return False

    @property
    def waits_on(self) -> Person | None:
        return None

    @property
    def asks_a_person(self) -> bool:
        return False

    @property
    def caller_approves(self) -> bool:
        return False

    @property
    def approval_acts_alone(self) -> bool:
        return False

    @property
    def approves_a_handle(self) -> bool:
        return False

    @property
    def stages(self) -> bool:
        return False

    @property
    def staged_id_names(self) -> tuple[frozenset[str], bool]:
        return frozenset(), False

    @property
    def agent_presents_the_handle(self) -> bool:
        return False

    @property
    def redeems_the_persons_answer(self) -> bool:
        return False

    @property
    def token_in_the_call(self) -> bool:
        return False

    @property
    def redemption_carries_the_action(self) -> bool:
        return False

    def redemption(
        self, arguments: Mapping[str, Any], handle: str | None, saved: Mapping[str, str]
    ) -> tuple[str, dict[str, Any]] | None:
        return None

    async def approval(self, channel: Channel, handle: str) -> dict[str, str]:
        return {}

    @property
    def person_declines(self) -> bool:
        return False

    async def decline(self, channel: Channel, handle: str) -> bool:
        return False

    def reads_its_preview(self, arguments: Mapping[str, Any]) -> bool:
        return False

    def preview_of(self, response: Response) -> Preview:
        return Preview(response)  # nothing handed out: a flag's or a waiting call's reply has no handle

    def forget(self) -> None:
        return None  # nothing kept of any reply

    async def confirm_once_read(
        self, channel: Channel, arguments: Mapping[str, Any], between: Callable[[], Awaitable[None]]
    ) -> Response:
        raise HumanFailed(
            "this flow does not wait while the person reads: its question is its preview, so a change "
            "goes between the preview and the confirming call"
        )
