"""Driving a confirmation flow from inside an attack: every call recorded in the transcript."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..channels import human
from ..confirmations import AgentFlow, HumanFailed, Preview, as_flow
from ..models import Exchange, Response
from ..target.driver import Connection, ToolInfo
from .base import Attack


class AttackChannel:
    """A confirmations Channel over the attack's connection; the human's steps become notes."""

    def __init__(self, attack: Attack, connection: Connection | None = None) -> None:
        self.attack = attack
        self.connection = connection or attack.primary
        # What the person's steps showed them (a webhook body, a prompt), and what they saved.
        self.shown: list[tuple[str, str]] = []
        self.saved: dict[str, str] = {}
        # How many of the person's steps were taken (a step cut short when a call that waited ended is not).
        self.taken = 0
        # The calls made through this channel, as the transcript records them (a race pairs them).
        self.exchanges: list[Exchange] = []

    async def call(
        self, label: str, tool: str, arguments: Mapping[str, Any], *, unanswered: bool = False
    ) -> Response:
        exchange = await self.attack.exchange(
            label,
            self.attack.case.victim,
            arguments=arguments,
            tool=tool,
            connection=self.connection,
            unanswered=unanswered,
        )
        self.exchanges.append(exchange)
        return exchange.response

    async def human(
        self,
        label: str,
        steps: Sequence[human.Step],
        values: Mapping[str, str],
        *,
        seen: Sequence[str] = (),
        before_answer: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, str]:
        """The person's steps; `seen`: what the agent's calls returned, for steps taken as the agent."""
        observer = self.attack.observer
        where = human.Where(
            self.attack.sandbox.root,
            self.connection.call_timeout,
            human.base_url(self.connection.endpoint),
            dict(values),
            observer.sink.requests if observer is not None and observer.sink is not None else None,
            self.connection.stderr_path,
            self.connection.terminal,
            tuple(seen),
            self.connection.places(),
            before_answer,
        )

        def kept(done: human.Taken) -> None:
            if done.said:
                self.taken += 1
                self.attack.note(f"{label} on the human's channel: {done.said[:160]}")
            if done.shown is not None:
                self.shown.append((done.medium, done.shown))

        saved, _ = await human.take_all(steps, where, kept)
        self.saved.update(saved)
        return saved


def flow_or_not_applicable(attack: Attack, what: str) -> AgentFlow | None:
    flow = as_flow(attack.plan.mechanism)
    if flow is None:
        kind = attack.plan.mechanism.kind if attack.plan.mechanism is not None else "mrtr"
        attack.not_applicable(f"the tool confirms with {kind}, which has no {what}")
    return flow


def token_or_not_applicable(attack: Attack, what: str, otherwise: str) -> AgentFlow | None:
    """The tool's flow if its confirming call carries a token (`token_in_the_call`); else not applicable,
    saying `what` an MRTR tool lacks or `otherwise` why."""
    flow = flow_or_not_applicable(attack, what)
    if flow is not None and not flow.token_in_the_call:
        attack.not_applicable(f"{otherwise}: {flow.describe()}")
        return None
    return flow


def tool_info(attack: Attack, name: str | None = None) -> ToolInfo | None:
    wanted = name or attack.plan.name
    return next((t for t in attack.tools if t.name == wanted), None)


async def previewed(
    attack: Attack, flow: AgentFlow, channel: AttackChannel, arguments: Mapping[str, Any]
) -> Preview | None:
    """The flow's preview, for a step that needs its handle; None (set up wrong, saying why) without one."""
    shown = await flow.preview(channel, arguments)
    if shown.handle is None:
        said = shown.response.text[:200] or shown.response.outcome.value
        attack.setup_failed(f"the preview handed out no token or pending id ({said})")
        return None
    return shown


def unseen_request(flow: AgentFlow) -> str | None:
    """Why what the person reads before approving is unknown over `flow`, saying how to declare it; None if known.

    A person who approves on a channel of their own (`hands_over`: a command they run, a link they
    follow, a challenge they sign) reads the request there, and only their steps before the first that
    may approve show it (reads, commands with `shows: true`). The preview's reply went to the agent:
    nothing says it is passed on, and what the person's own tool prints may differ from it (a
    `show` command that prints raw what the agent got as escaped JSON, or the reverse). With no step
    that shows, nothing the person read can be judged.

    Every other flow keeps the preview's reply as the question: a token the agent redeems, or a
    pending id its own approve tool takes, is said yes to through the agent, which relays the preview
    to the person (as a client shows an MRTR question); a call that waits shows its prompt on the
    person's channel while it waits (its `decline:` steps read it, checked where it is read).
    """
    person = flow.hands_over
    if person is None or flow.waits_for_person or person.shows_the_request:
        return None
    return (
        "nothing shows the person the request: they approve on their own channel, and the reply to the "
        "agent's call is not what they read; declare the step that shows it to them before they approve "
        "(a command with shows: true, such as the approval tool's show or list command, or a read: of "
        "the message sent them)"
    )


async def what_the_person_read(
    flow: AgentFlow, channel: AttackChannel, preview: Preview, before: int
) -> tuple[tuple[str, str], ...] | None:
    """What the person was shown about `preview` on their own channel, (medium, text) each; None if nothing.

    A waits flow showed it while the call waited (its decline steps read the prompt); a pending or token
    flow shows it when the person's first steps are taken, up to the first that may approve (reads, and
    commands that only show): a webhook body, a device's card.
    """
    person = flow.hands_over
    if person is not None and preview.handle is not None:
        looking = person.looking
        if looking:
            values = {"id": preview.handle, "challenge": preview.handle, "token": preview.handle}
            try:
                await channel.human("the person reads what they are asked", looking, values)
            except human.HumanFailed as exc:
                channel.attack.note(f"what the person is shown could not be read: {exc}")
    shown = tuple(channel.shown[before:])
    return shown or None


async def person_declines(attack: Attack, flow: AgentFlow, channel: Any, handle: str) -> bool | None:
    """The person's no to `handle`: True once said, False where this flow has no way to say it.

    None when the person's decline step failed (a `deny` that exits 1): nobody said no, so what
    follows would judge nothing; the attack's setup failed, saying why.
    """
    try:
        return await flow.decline(channel, handle)
    except HumanFailed as exc:
        attack.setup_failed(f"the person's decline step failed: {exc}")
        return None
