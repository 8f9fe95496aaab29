"""`Attack`: what a technique holds while it runs, and the recorder of what it saw.

Every request goes through here so that nothing reaches the target without
being written into the transcript. Calls made before `start_attack()` are
setup; calls after it, and only the disk changes after it, are judged.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcp import types

from .. import answers
from ..discovery import ToolPlan, arguments_for
from ..driver import Connection, ToolInfo
from ..generation import Generation
from ..models import (
    AttackSpec,
    Exchange,
    Outcome,
    Phase,
    Precondition,
    Question,
    Response,
    Transcript,
    Verdict,
)
from ..sandbox import VICTIM_TEXT, Case, Sandbox


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
        self._before = None
        self._setup_failure: str | None = None
        self._not_applicable: str | None = None
        self._findings: list[tuple[Verdict, str]] = []
        self._changed_in_place: list[str] = []

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
        others = sorted((t for t in self.tools if t.name != self.plan.name), key=lambda t: t.read_only is True)
        if not others:
            return None
        return others[0].name, arguments_for(others[0], self.path_value(self.case.victim))

    # -- talking ----------------------------------------------------------

    async def other_connection(self) -> Connection:
        """A second process of the same target, on the same sandbox."""
        return await self._open_other()

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
        conn = connection or self.primary
        args = arguments if arguments is not None else self.arguments(path)
        exchange = await conn.call(
            self._phase, label, tool or self.plan.name, args, state=state, responses=responses
        )
        self._exchanges.append(exchange)
        return exchange.response

    async def call_raw(self, label: str, params: Mapping[str, Any], *, connection: Connection | None = None) -> Response:
        exchange = await (connection or self.primary).call_raw(self._phase, label, params)
        self._exchanges.append(exchange)
        return exchange.response

    async def ask(self, path: Path | str, *, connection: Connection | None = None, label: str = "ask") -> Response:
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
        return {q.key: types.ElicitResult(action="accept", content=self.yes(q, path)) for q in response.questions}

    def reply(self, response: Response, action: str, content: Mapping[str, Any] | None = None) -> dict[str, Any]:
        return {q.key: types.ElicitResult(action=action, content=content) for q in response.questions}  # type: ignore[arg-type]

    # -- the disk ---------------------------------------------------------

    def start_attack(self) -> None:
        """From here on, every request and every change on disk is judged."""
        self._before = self.sandbox.snapshot()
        self._phase = Phase.ATTACK

    def changed_in_place(self, path: Path) -> None:
        """Record that `path` was rewritten in place: still the confirmed inode, not what was shown."""
        self._changed_in_place.append(path.relative_to(self.sandbox.base).as_posix())

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
        )


def on_the_wire(responses: Mapping[str, Any]) -> dict[str, Any]:
    """Typed answers as the JSON a raw request carries."""
    return {k: v.model_dump(by_alias=True, mode="json", exclude_none=True) for k, v in responses.items()}
