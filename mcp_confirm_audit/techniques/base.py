"""`Attack`: what a technique holds while it runs, and the recorder of what it saw.

Every request goes through here so that nothing reaches the target without
being written into the transcript. Calls made before `start_attack()` are
setup; calls after it, and only the disk changes after it, are judged.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from mcp import types

from .. import answers
from ..generation import Generation
from ..models import (
    AttackSpec,
    Exchange,
    Outcome,
    Phase,
    Precondition,
    Question,
    Response,
    SingleUse,
    Transcript,
    TreeSnapshot,
    Verdict,
)
from ..oracle.sandbox import VICTIM_TEXT, Case, Sandbox
from ..target.discovery import ToolPlan, arguments_for
from ..target.driver import Connection, ToolInfo


class Unavailable(Exception):
    """A connection an attack needs cannot exist for this target; the message says how to enable it."""


class Peers(Protocol):
    """The connections beyond the primary that some attacks need."""

    @property
    def shared_keys(self) -> bool:
        """Whether every process of the target shares one request-state key."""
        ...

    @property
    def redemptions(self) -> int:
        """How many redemptions of one approval a race sends at once."""
        ...

    async def other(self) -> Connection:
        """Another process (or instance) of the target on the same root."""
        ...

    async def replicas(self) -> list[Connection]:
        """Every replica of the target on the same root, the primary first."""
        ...

    async def same_process(self, count: int) -> list[Connection]:
        """`count` connections to the primary's process (the one connection again over stdio)."""
        ...

    async def short_lived(self) -> tuple[Connection, float]:
        """A process of the target whose confirmations expire, and their lifetime in seconds."""
        ...

    async def declaring(self, elicitation: str) -> Connection:
        """A client of the target that declares `elicitation`: "none" (no capability) or "url" (URL mode only)."""
        ...


class NoPeers:
    """Peers of a target that has only its primary connection."""

    shared_keys = False
    redemptions = 8

    async def other(self) -> Connection:
        raise Unavailable("no other process of the target can be started here")

    async def replicas(self) -> list[Connection]:
        raise Unavailable("no replicas of the target can be started here")

    async def same_process(self, count: int) -> list[Connection]:
        raise Unavailable("no more connections to the target can be opened here")

    async def short_lived(self) -> tuple[Connection, float]:
        raise Unavailable("no short-lived process of the target can be started here")

    async def declaring(self, elicitation: str) -> Connection:
        raise Unavailable("no client with other capabilities can be opened here")


class Attack:
    def __init__(
        self,
        spec: AttackSpec,
        plan: ToolPlan,
        style: str,
        sandbox: Sandbox,
        case: Case,
        primary: Connection,
        open_other: Callable[[], Awaitable[Connection]],
        *,
        tools: Sequence[ToolInfo] = (),
        answer_template: Mapping[str, Any] | None = None,
        negative_template: Mapping[str, Any] | None = None,
        generation: Generation | None = None,
        peers: Peers | None = None,
    ) -> None:
        self.spec = spec
        self.plan = plan
        self.style = style
        self.sandbox = sandbox
        self.case = case
        self.primary = primary
        self._open_other = open_other
        self.tools = tuple(tools)
        self._answer_template = answer_template
        self._negative_template = negative_template
        self.generation = generation or Generation()
        self._phase = Phase.SETUP
        self._exchanges: list[Exchange] = []
        self._notes: list[str] = []
        self._before: TreeSnapshot | None = None
        self._setup_failure: str | None = None
        self._not_applicable: str | None = None
        self._findings: list[tuple[Verdict, str]] = []
        self._changed_in_place: list[str] = []
        self.peers: Peers = peers or NoPeers()
        self._single_use: SingleUse | None = None
        self._effect_verdict: tuple[Verdict, str] | None = None

    # -- naming files to the target -------------------------------------

    def path_value(self, path: Path | str) -> str:
        """A sandbox path as this tool expects it; a str is sent exactly as written."""
        if isinstance(path, str):
            return path
        if self.style == "absolute":
            return str(path)
        return os.path.relpath(path, self.sandbox.root)

    def arguments(self, path: Path | str, **overrides: Any) -> dict[str, Any]:
        return {**self.plan.extra_args, self.plan.path_arg: self.path_value(path), **overrides}

    def other_tool(self) -> tuple[str, dict[str, Any]] | None:
        """Another tool of the target, with arguments naming the same victim."""
        others = sorted(
            (t for t in self.tools if t.name != self.plan.name), key=lambda t: t.read_only is True
        )
        if not others:
            return None
        return others[0].name, arguments_for(others[0], self.path_value(self.case.victim))

    # -- talking ----------------------------------------------------------

    async def other_connection(self) -> Connection:
        """A second process of the same target, on the same sandbox."""
        return await self._open_other()

    async def peer(self, get: Callable[[], Awaitable[Any]]) -> Any:
        """`await attack.peer(attack.peers.replicas)`: the connections, or None (not applicable, with why)."""
        try:
            return await get()
        except Unavailable as exc:
            self.not_applicable(str(exc))
            return None

    async def call(
        self,
        label: str,
        path: Path | str,
        *,
        state: str | None = None,
        responses: Mapping[str, Any] | None = None,
        arguments: Mapping[str, Any] | None = None,
        tool: str | None = None,
        connection: Connection | None = None,
    ) -> Response:
        exchange = await self.exchange(
            label,
            path,
            state=state,
            responses=responses,
            arguments=arguments,
            tool=tool,
            connection=connection,
        )
        return exchange.response

    async def exchange(
        self,
        label: str,
        path: Path | str,
        *,
        state: str | None = None,
        responses: Mapping[str, Any] | None = None,
        arguments: Mapping[str, Any] | None = None,
        tool: str | None = None,
        connection: Connection | None = None,
    ) -> Exchange:
        """`call`, returning the recorded exchange itself."""
        conn = connection or self.primary
        args = arguments if arguments is not None else self.arguments(path)
        exchange = await conn.call(
            self._phase, label, tool or self.plan.name, args, state=state, responses=responses
        )
        self._exchanges.append(exchange)
        return exchange

    async def call_raw(
        self, label: str, params: Mapping[str, Any], *, connection: Connection | None = None
    ) -> Response:
        exchange = await (connection or self.primary).call_raw(self._phase, label, params)
        self._exchanges.append(exchange)
        return exchange.response

    async def ask(
        self, path: Path | str, *, connection: Connection | None = None, label: str = "ask"
    ) -> Response:
        """Round one; marks the attack as set up wrong if the target did not ask."""
        response = await self.call(label, path, connection=connection)
        if response.outcome is not Outcome.INPUT_REQUIRED or not response.questions:
            self.setup_failed(f"round one did not ask for confirmation ({response.outcome}: {response.text})")
        return response

    # -- answering --------------------------------------------------------

    def _names(self, path: Path | str) -> tuple[str, str]:
        value = self.path_value(path)
        return Path(value).name, value

    def yes(self, question: Question, path: Path | str) -> dict[str, Any]:
        name, value = self._names(path)
        return answers.affirmative(question.schema, name, value, self._answer_template)

    def no(self, question: Question, path: Path | str) -> dict[str, Any] | None:
        name, value = self._names(path)
        return answers.negative(question.schema, name, value, self._negative_template)

    def accept(self, response: Response, path: Path | str) -> dict[str, types.ElicitResult]:
        """The honest "yes" to every question in a round-one response."""
        return {
            q.key: types.ElicitResult(action="accept", content=self.yes(q, path)) for q in response.questions
        }

    def reply(
        self, response: Response, action: str, content: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return {q.key: types.ElicitResult(action=action, content=content) for q in response.questions}  # type: ignore[arg-type]

    # -- the disk ---------------------------------------------------------

    def start_attack(self) -> None:
        """From here on, every request and every change on disk is judged."""
        self._before = self.sandbox.snapshot()
        self._phase = Phase.ATTACK

    def changed_in_place(self, path: Path) -> None:
        """Record that `path` was rewritten in place: still the confirmed inode, not what was shown."""
        self._changed_in_place.append(self.case.rel(path))

    def restore_victim(self, path: Path | None = None) -> None:
        target = path or self.case.victim
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(VICTIM_TEXT)

    # -- what cannot be judged ---------------------------------------------

    def note(self, text: str) -> None:
        self._notes.append(text)

    def finding(self, verdict: Verdict, message: str) -> None:
        """Something the target showed the human, judged without looking at the disk."""
        self._findings.append((verdict, message))

    def single_use(
        self,
        pairs: Sequence[tuple[Exchange, Exchange]],
        taken_racing: int,
        taken: int,
        if_none_taken: str = "inconclusive",
    ) -> None:
        """Record redemptions of one approval of which at most one may act; the verdict judges them.

        `pairs`: each racing redemption with the sequential replay on its process.
        """
        index = {id(e): i for i, e in enumerate(self._exchanges)}
        racing = tuple(index[id(redemption)] for redemption, _ in pairs)
        replays = tuple(index[id(replay)] for _, replay in pairs)
        self._single_use = SingleUse(racing, replays, taken_racing, taken, if_none_taken)

    def effect_means(self, verdict: Verdict, why: str) -> None:
        """What an effect during the attack means, when not `vulnerable` (a flow no human was asked in: weak)."""
        self._effect_verdict = (verdict, why)

    def setup_failed(self, reason: str) -> None:
        self._setup_failure = self._setup_failure or reason

    def not_applicable(self, reason: str) -> None:
        self._not_applicable = self._not_applicable or reason

    @property
    def failed(self) -> bool:
        return self._setup_failure is not None or self._not_applicable is not None

    def transcript(self, precondition: Precondition) -> Transcript:
        after = self.sandbox.snapshot() if self._before is not None else None
        return Transcript(
            attack_id=self.spec.id,
            tool=self.plan.name,
            precondition=precondition,
            exchanges=tuple(self._exchanges),
            before=self._before,
            after=after,
            notes=tuple(self._notes),
            setup_failure=self._setup_failure,
            not_applicable=self._not_applicable,
            findings=tuple(self._findings),
            changed_in_place=tuple(self._changed_in_place),
            single_use=self._single_use,
            mechanism=self.plan.mechanism.kind if self.plan.mechanism is not None else None,
            effect_verdict=self._effect_verdict,
        )


def on_the_wire(responses: Mapping[str, Any]) -> dict[str, Any]:
    """Typed answers as the JSON a raw request carries."""
    return {k: v.model_dump(by_alias=True, mode="json", exclude_none=True) for k, v in responses.items()}
