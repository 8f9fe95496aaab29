"""`pending`: the call stages the action under an id; approving it is someone else's step.

`approve` is a tool call that approves (the agent can make it: no human is
then involved); `human` is the person on a channel of their own (a command
the harness runs, or an HTTP call to the server's approval endpoint, with
`{id}`); `execute` is the later call that acts, when the approval itself does not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..channels import human
from ..channels.human import HumanStep
from ..models import Response
from ..profile.headers import Header
from .base import Channel, HumanFailed, Mechanism, Preview

# A result field that names the staged action.
ID_FIELD = re.compile(r"^(pending|proposal|action|staged|approval|operation|request|change)_?id$", re.I)
# A status that says the action waits: `pending`, `pending_approval`, `awaiting_confirmation`.
WAITING = re.compile(r"^\s*(pending|awaiting|staged|needs?[_ ]approval|proposed)", re.I)


@dataclass(frozen=True, slots=True)
class CallTemplate:
    """A tool call whose string arguments may say `{id}`."""

    tool: str
    args: Mapping[str, Any]

    def filled(self, pending_id: str) -> dict[str, Any]:
        return {k: v.replace("{id}", pending_id) if isinstance(v, str) else v for k, v in self.args.items()}


@dataclass(frozen=True, slots=True)
class Human:
    """The person's own channel: how they approve, and how they decline, each with `{id}`."""

    approve: HumanStep
    decline: HumanStep | None = None


@dataclass(frozen=True, slots=True)
class Pending:
    tool: str = ""
    id_from: str | None = None  # None: the first result field named like an action id
    approve: CallTemplate | None = None
    human: Human | None = None
    execute: CallTemplate | None = None
    source: str = "detected"

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
        then = f", then {self.execute.tool!r} acts" if self.execute is not None else ""
        return f"pending: the call stages the action under an id; {approved} approves it{then}"

    def for_tool(self, tool: str) -> Pending:
        return replace(self, tool=tool)

    @property
    def own_tools(self) -> tuple[str, ...]:
        return tuple(t.tool for t in (self.approve, self.execute) if t is not None)

    async def preview(self, channel: Channel, arguments: Mapping[str, Any]) -> Preview:
        return Preview.read(await channel.call("stage", self.tool, arguments), self.id_from, ID_FIELD)

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
        last = await self.approve_only(channel, handle, as_agent=as_agent)
        if self.execute is not None:
            return await channel.call("execute", self.execute.tool, self.execute.filled(handle))
        if last is None:
            raise HumanFailed("approved, but no execute call is known and the approval said nothing")
        return last

    async def approve_only(self, channel: Channel, handle: str, *, as_agent: bool = False) -> Response | None:
        """The approval step alone: the human's command, or the approve tool (what it answered)."""
        if self.human is not None and not as_agent:
            await channel.human(f"the human approves {handle}", self.human.approve.with_id(handle))
            return None
        if self.approve is not None:
            return await channel.call("approve", self.approve.tool, self.approve.filled(handle))
        if not as_agent:
            raise HumanFailed(
                "nothing can approve the pending action: name the human's channel in the profile "
                "(confirmation: {kind: pending, pending: {human: {command: 'approve-cli {id}'}}}, or "
                "human: {http: {url: '{url}/approvals/{id}'}}) or the approve tool"
            )
        return None

    async def decline(self, channel: Channel, handle: str) -> bool:
        """The human says no on their channel; False when the profile gives no way to."""
        if self.human is None or self.human.decline is None:
            return False
        await channel.human(f"the human declines {handle}", self.human.decline.with_id(handle))
        return True


def human_steps(mechanism: Mechanism | None) -> tuple[HumanStep, ...]:
    """The steps a profile gives the person: how they approve, and how they decline if it says."""
    if not isinstance(mechanism, Pending) or mechanism.human is None:
        return ()
    said = mechanism.human
    return (said.approve,) if said.decline is None else (said.approve, said.decline)


def human_headers(mechanism: Mechanism | None) -> tuple[Header, ...]:
    """The headers the person's own requests carry: credentials, never shown."""
    steps = human_steps(mechanism)
    return tuple(h for step in steps if isinstance(step, human.HttpCall) for h in step.headers)


def target_url_problem(mechanism: Mechanism | None, transport: str, url: str | None) -> str | None:
    """Why a human's step cannot be sent to `{url}` on this target; None if none names it or it can."""
    named = [s for s in human_steps(mechanism) if isinstance(s, human.HttpCall) and "{url}" in s.url]
    if not named:
        return None
    if transport != "http":
        return (
            f"confirmation: pending.human names {{url}}, the target's base URL, and this target speaks {transport}; "
            "serve it over HTTP ({port} in the command) or give the approval endpoint's full loopback URL"
        )
    if url is not None and (problem := human.loopback_problem(url)):
        return f"confirmation: pending.human names {{url}}, the target's base URL, and {problem}"
    return None
