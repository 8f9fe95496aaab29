"""`pending`: the call stages the action under an id; approving it is someone else's step.

`approve` is a tool call that approves (the agent can make it: no human is
then involved); `human` is the person on a channel of their own (steps in
`channels/`: a command, an HTTP call to the approval endpoint, a webhook read
at the sink, a link followed, a code read off the target's output), with
`{id}`; `execute` is the later call that acts, when the approval itself does
not, with `{id}` and whatever the person's steps saved (`{evidence}`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..channels.base import PLACEHOLDER
from ..channels.human import Person
from ..models import Outcome, Response
from . import values
from .base import Channel, FlowDefaults, HumanFailed, Preview

# A result field that names the staged action.
ID_FIELD = re.compile(r"^(pending|proposal|action|staged|approval|operation|request|change)_?id$", re.I)
# A status that says the action waits: `pending`, `pending_approval`, `awaiting_confirmation`.
WAITING = re.compile(r"^\s*(pending|awaiting|staged|needs?[_ ]approval|proposed)", re.I)


class Filled(dict[str, Any]):
    """A call's arguments filled from a profile's template, and the `{NAME}`s nothing filled (sent as written)."""

    unfilled: tuple[str, ...] = ()
    # The `{NAME}`s of the agent's own call that only the person's steps save: sent empty, as an agent
    # that never had them would (never the harness's literal `{NAME}`).
    emptied: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CallTemplate:
    """A tool call whose string arguments may say `{id}`."""

    tool: str
    args: Mapping[str, Any]
    # Names saved by setup that the action's arguments carry whole, each with the argument carrying it.
    carried: Mapping[str, str] = field(default_factory=dict)

    def filled(
        self,
        pending_id: str,
        saved: Mapping[str, str] | None = None,
        arguments: Mapping[str, Any] | None = None,
        *,
        withheld: Callable[[str], bool] | None = None,
    ) -> Filled:
        """The arguments with `{id}`, every name the person's steps saved, and setup's names carried.

        A name no one saved (the person's step that saves it was left out) stays as written, and is
        named in `unfilled`: the call is malformed, and what the target answers it says nothing.
        `withheld`: the agent's own call, made without the person; a name it says only the person
        can hold (made with their credential) is one the agent never has, sent empty (`emptied`).
        """
        given = arguments or {}
        setup = {name: str(given[arg]) for name, arg in self.carried.items() if arg in given}
        known = {**setup, **(saved or {}), "id": pending_id}
        if withheld is not None:
            empty = tuple(n for n in self.filled(pending_id, saved, arguments).unfilled if withheld(n))
            args = self.filled(pending_id, {**dict.fromkeys(empty, ""), **(saved or {})}, arguments)
            args.emptied = empty
            return args
        args = Filled(
            {
                k: PLACEHOLDER.sub(lambda m: known.get(m.group(1), m.group(0)), v)
                if isinstance(v, str)
                else v
                for k, v in self.args.items()
            }
        )
        args.unfilled = tuple(
            dict.fromkeys(
                name
                for v in self.args.values()
                if isinstance(v, str)
                for name in PLACEHOLDER.findall(v)
                if name not in known
            )
        )
        return args


# `Preview.field` of a pending id the profile's `id_pattern` found in the reply's prose.
ID_PATTERN = "id_pattern"


def handed(pending_id: str) -> dict[str, str]:
    """What the person's steps know of a pending action: its id, which is also what they sign."""
    return {"id": pending_id, "challenge": pending_id, "token": pending_id}


# The person's own channel: how they approve, and how they decline (steps, with `{id}`).
Human = Person


@dataclass(frozen=True, slots=True)
class Pending(FlowDefaults):
    tool: str = ""
    id_from: str | None = None  # None: the first result field named like an action id
    # An id said in prose ("request abc123, expires..."): the first group of this pattern in the reply.
    id_pattern: re.Pattern[str] | None = None
    approve: CallTemplate | None = None
    human: Human | None = None
    execute: CallTemplate | None = None
    source: str = "detected"
    # What each staging call answered beside its id, by id: a detected approve call may carry one of
    # its fields back (`confirmation: "{confirmation_phrase_required}"`, the phrase the draft wants).
    staged: dict[str, dict[str, str]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def kind(self) -> str:
        return "pending"

    def describe(self) -> str:
        who = []
        if self.human is not None:
            who.append("a human on a second channel")
        if self.approve is not None:
            who.append(f"the tool {self.approve.tool!r}")
        approved = " or ".join(who) or "nobody the harness knows of"
        again = self.execute is not None and self.execute.tool == self.tool
        then = f", then {self.execute.tool!r} acts" if self.execute is not None else ""
        if self.id_from is None and self.id_pattern is None and self.source == "detected":
            # Detected from a status alone: saying it stages under an id would contradict every style's
            # "returned no pending id" after it.
            staged = "the call answers that the action waits, and names no id to approve it by"
        elif self.again:
            staged = "the call stages the action under an id"
            then = f", then {self.tool!r} is called again with the same arguments and acts"
        elif again:
            staged = f"the call waits for its own {self.id_from!r} to be approved (the subject is the handle)"
            then = f", then {self.tool!r} is called with it again and acts"
        else:
            staged = "the call stages the action under an id"
        return f"pending: {staged}; {approved} approves it{then}"

    def for_tool(self, tool: str) -> Pending:
        return replace(self, tool=tool)

    @property
    def own_tools(self) -> tuple[str, ...]:
        return tuple(t.tool for t in (self.approve, self.execute) if t is not None)

    @property
    def hands_over(self) -> Person | None:
        return self.human

    @property
    def asks_a_person(self) -> bool:
        return self.human is not None

    @property
    def approves_a_handle(self) -> bool:
        return True

    @property
    def stages(self) -> bool:
        return True

    @property
    def agent_presents_the_handle(self) -> bool:
        return self.execute is not None or self.approve is not None

    @property
    def staged_id_names(self) -> tuple[frozenset[str], bool]:
        calls = (self.execute, self.approve)
        names = {k for call in calls if call is not None for k, v in call.args.items() if v == "{id}"}
        if self.id_from:
            names.add(self.id_from.rsplit(".", 1)[-1])
        return frozenset(names), self.id_from is None and self.id_pattern is None

    async def approval(self, channel: Channel, handle: str) -> dict[str, str]:
        return (await self.approved(channel, handle))[1]

    @property
    def approval_acts_alone(self) -> bool:
        return self.execute is None

    @property
    def again(self) -> bool:
        """The approved action is redeemed by the gated call itself, sent again with its own arguments.

        `execute: {tool: <the gated tool>}` with no `args:` (actgate: the person approves the intent
        id on their CLI, and the identical `tools/call` then runs once).
        """
        return self.execute is not None and self.execute.tool == self.tool and not self.execute.args

    @property
    def redemption_carries_the_action(self) -> bool:
        # The gated call again carries its own arguments, whatever it stages under (cmd-line-mcp's
        # session_id, an argument the agent chose): another action's can be sent in their place. An
        # execute call filled from its template sends the id (and fixed values), never another action.
        return self.again

    def _executed(
        self,
        handle: str,
        saved: Mapping[str, str],
        arguments: Mapping[str, Any],
        withheld: Callable[[str], bool] | None = None,
    ) -> Filled:
        assert self.execute is not None
        if self.again:
            return Filled(dict(arguments))
        return self.execute.filled(handle, saved, arguments, withheld=withheld)

    def redemption(
        self, arguments: Mapping[str, Any], handle: str | None, saved: Mapping[str, str]
    ) -> tuple[str, dict[str, Any]] | None:
        if self.execute is None or handle is None:
            return None
        return self.execute.tool, self._executed(handle, saved, arguments)

    def preview_of(self, response: Response) -> Preview:
        if self.id_pattern is not None:
            found = self.id_pattern.search(response.text)
            return Preview(response, found.group(1) if found else None, ID_PATTERN if found else None)
        return Preview.read(response, self.id_from, ID_FIELD)

    async def preview(self, channel: Channel, arguments: Mapping[str, Any]) -> Preview:
        response = await channel.call("stage", self.tool, arguments)
        read = self.preview_of(response)
        if read.handle is not None and read.field != ID_PATTERN:
            said = values.fields(response)
            self.staged[read.handle] = {k: str(v) for k, v in said.items() if isinstance(v, str | int)}
        return read

    async def confirm(
        self,
        channel: Channel,
        arguments: Mapping[str, Any],
        handle: str | None,
        *,
        tool: str | None = None,
        as_agent: bool = False,
    ) -> Response:
        if handle is None:
            raise HumanFailed("the staging call returned no pending id")
        last, saved = await self.approved(channel, handle, as_agent=as_agent)
        if self.execute is not None:
            withheld = self.human.withheld if as_agent and self.human is not None else None
            filled = self._executed(handle, saved, arguments, withheld)
            return await channel.call("execute", self.execute.tool, filled)
        if last is None and self.human is not None and not as_agent:
            # The person's approval is itself the action (a queued memory becomes a confirmed one):
            # what it did shows where every effect shows, in the probes and the sandbox.
            return Response(Outcome.COMPLETE, f"the human approved {handle}; no execute step follows")
        if last is None:
            raise HumanFailed("approved, but no execute call is known and the approval said nothing")
        return last

    async def approve_only(self, channel: Channel, handle: str, *, as_agent: bool = False) -> Response | None:
        """The approval step alone: the human's steps, or the approve tool (what it answered)."""
        return (await self.approved(channel, handle, as_agent=as_agent))[0]

    async def approved(
        self, channel: Channel, handle: str, *, as_agent: bool = False
    ) -> tuple[Response | None, dict[str, str]]:
        """The approval step: what the approve tool answered (None for the human), and what the human saved."""
        if self.human is not None and not as_agent:
            saved = await channel.human(f"the human approves {handle}", self.human.approve, handed(handle))
            return None, saved
        if self.approve is not None:
            filled = self.approve.filled(handle, self.staged.get(handle))
            return await channel.call("approve", self.approve.tool, filled), {}
        if not as_agent:
            raise HumanFailed(
                "nothing can approve the pending action: name the human's channel in the profile "
                "(confirmation: {kind: pending, pending: {human: {command: 'approve-cli {id}'}}}, or "
                "human: {http: {url: '{url}/approvals/{id}'}}) or the approve tool"
            )
        return None, {}

    @property
    def person_declines(self) -> bool:
        return self.human is not None and self.human.decline is not None

    async def decline(self, channel: Channel, handle: str) -> bool:
        """The human says no on their channel; False when the profile gives no way to."""
        if self.human is None or self.human.decline is None:
            return False
        await channel.human(f"the human declines {handle}", self.human.decline, handed(handle))
        return True
