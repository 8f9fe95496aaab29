"""Controls: prove the honest flow works before attacking.

approve -> the effect happens (this also learns whether the tool takes paths
relative to the root or absolute); decline, cancel and an accepted "no" -> no
effect. If approve cannot be completed, no attack on the tool can be judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp import types

from . import answers, confirmations
from .confirmations import Mechanism, detect, honest
from .models import ControlResult, Exchange, Outcome, Phase, Question, Response
from .oracle.sandbox import Case, Sandbox, identity_of
from .target.discovery import ToolPlan
from .target.driver import Connection, ToolInfo
from .verdict import describe


@dataclass(frozen=True, slots=True)
class ControlOutcome:
    style: str | None
    results: tuple[ControlResult, ...]
    evidence: tuple[str, ...]
    # How the tool confirms, as the controls found it (None: MRTR, as planned).
    mechanism: Mechanism | None = None

    @property
    def approve_ok(self) -> bool:
        return self.style is not None


class _Runner:
    def __init__(
        self,
        plan: ToolPlan,
        conn: Connection,
        sandbox: Sandbox,
        answer: Mapping[str, Any] | None,
        negative: Mapping[str, Any] | None,
    ) -> None:
        self.plan, self.conn, self.sandbox = plan, conn, sandbox
        self.answer, self.negative = answer, negative
        self.evidence: list[str] = []
        self.first: list[Response] = []  # round one's answers, for detecting another mechanism

    def value(self, case: Case, style: str) -> str:
        return (
            str(case.victim) if style == "absolute" else case.victim.relative_to(self.sandbox.root).as_posix()
        )

    async def call(self, label: str, value: str, **kw: Any) -> Response:
        args = {**self.plan.extra_args, self.plan.path_arg: value}
        exchange: Exchange = await self.conn.call(Phase.SETUP, label, self.plan.name, args, **kw)
        self.evidence.append(describe(exchange))
        return exchange.response

    def yes(self, q: Question, value: str) -> dict[str, Any]:
        return answers.affirmative(q.schema, value.rsplit("/", 1)[-1], value, self.answer)


async def run_controls(
    plan: ToolPlan,
    conn: Connection,
    sandbox: Sandbox,
    answer: Mapping[str, Any] | None = None,
    negative: Mapping[str, Any] | None = None,
    *,
    tools: Sequence[ToolInfo] = (),
    call_timeout: float = 15.0,
) -> ControlOutcome:
    run = _Runner(plan, conn, sandbox, answer, negative)
    if (flow := confirmations.as_flow(plan.mechanism)) is not None:
        return await _other_mechanism(run, flow, call_timeout)
    style, approve = await _approve(run)
    if (
        style is None
        and plan.mechanism is None
        and (tool := next((t for t in tools if t.name == plan.name), None))
    ):
        found = next((m for r in run.first if (m := detect.from_response(r, tool, tools)) is not None), None)
        if (flow := confirmations.as_flow(found)) is not None:
            return await _other_mechanism(run, flow, call_timeout)
    results = [approve]
    if style is not None:
        for name in ("decline", "cancel", "negative"):
            results.append(await _refusal(run, style, name))
    return ControlOutcome(style, tuple(results), tuple(run.evidence))


async def _other_mechanism(run: _Runner, flow: confirmations.AgentFlow, timeout: float) -> ControlOutcome:
    def arguments(value: str) -> dict[str, Any]:
        return {**run.plan.extra_args, run.plan.path_arg: value}

    channel = honest.RecordingChannel(
        run.conn, Phase.SETUP, lambda e: run.evidence.append(describe(e)), run.sandbox.root, timeout
    )
    done = await honest.run(flow, arguments, run.plan.path_styles, run.sandbox, channel)
    return ControlOutcome(done.style, done.results, (*run.evidence, *channel.said), flow)


async def _approve(run: _Runner) -> tuple[str | None, ControlResult]:
    tried = []
    for style in run.plan.path_styles:
        case = run.sandbox.new_case(f"control-approve-{style}")
        value = run.value(case, style)
        before = identity_of(case.victim)
        first = await run.call(f"approve ({style} path): ask", value)
        run.first.append(first)
        if first.outcome is Outcome.INPUT_REQUIRED and first.questions:
            responses = {
                q.key: types.ElicitResult(action="accept", content=run.yes(q, value)) for q in first.questions
            }
            done = await run.call(
                f"approve ({style} path): accept", value, state=first.request_state, responses=responses
            )
            if identity_of(case.victim) != before:
                return style, ControlResult(
                    run.plan.name, "approve", True, True, f"asked, accepted, acted ({style} paths)"
                )
            tried.append(f"{style}: accepted but nothing happened ({done.outcome}: {done.text[:200]})")
        elif identity_of(case.victim) != before:
            return None, ControlResult(
                run.plan.name,
                "approve",
                False,
                True,
                f"the tool acted without asking for confirmation ({style} paths)",
            )
        else:
            tried.append(f"{style}: did not ask ({first.outcome}: {first.text[:200]})")
    return None, ControlResult(run.plan.name, "approve", False, True, "; ".join(tried))


async def _refusal(run: _Runner, style: str, name: str) -> ControlResult:
    case = run.sandbox.new_case(f"control-{name}")
    value = run.value(case, style)
    before = identity_of(case.victim)
    first = await run.call(f"{name}: ask", value)
    if first.outcome is not Outcome.INPUT_REQUIRED or not first.questions:
        return ControlResult(
            run.plan.name, name, False, True, f"did not ask ({first.outcome}: {first.text[:200]})"
        )
    if name == "negative":
        contents = {
            q.key: answers.negative(q.schema, case.victim.name, value, run.negative) for q in first.questions
        }
        if any(c is None for c in contents.values()):
            return ControlResult(run.plan.name, name, True, False, "the form has no field that can say no")
        responses: dict[str, Any] = {
            k: types.ElicitResult(action="accept", content=c) for k, c in contents.items()
        }
    else:
        responses = {q.key: types.ElicitResult(action=name) for q in first.questions}  # type: ignore[arg-type]
    done = await run.call(f"{name}: answer", value, state=first.request_state, responses=responses)
    if identity_of(case.victim) != before:
        return ControlResult(
            run.plan.name, name, False, True, f"the victim was removed or changed after a {name}"
        )
    if done.outcome is Outcome.TRANSPORT:
        return ControlResult(run.plan.name, name, False, True, f"the target stopped answering: {done.text}")
    return ControlResult(run.plan.name, name, True, True, f"no effect ({done.outcome}: {done.text[:200]})")
