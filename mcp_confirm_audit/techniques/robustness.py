"""`robustness`: inputs that take a careless server down, each tried twice.

An input that stops the target (no answer within the call timeout, or the
process gone) is sent again, unchanged, to a fresh process of the same
server. The verdict reads both exchanges: stopped twice is a reliable denial
of service; stopped once is a fault the run cannot explain (inconclusive).
The disk is watched as for every attack: an input that makes the target act
is `vulnerable` whatever else happened.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from ..models import Outcome, Response
from ..target.driver import Connection
from . import technique
from ._params import Params
from .base import Attack


class RobustnessParams(Params):
    input: Literal["oversized-path", "malformed-answer"]
    size: int | None = Field(None, description="the path's size in characters (oversized-path)")
    answer: str | None = Field(
        None, description="what each answer is instead of an elicitation result (malformed-answer)"
    )


@technique("robustness", params=RobustnessParams)
async def robustness(attack: Attack, params: Mapping[str, Any]) -> None:
    kind = params["input"]
    if kind == "oversized-path":
        await _oversized_path(attack, int(params["size"]))
    elif kind == "malformed-answer":
        await _malformed_answer(attack, params["answer"])
    else:
        raise ValueError(f"robustness: unknown input {kind!r}")


def _stopped(response: Response) -> bool:
    return response.outcome is Outcome.TRANSPORT


async def _fresh_process(attack: Attack) -> Connection:
    attack.note("the target stopped answering; the same input goes to a fresh process")
    return await attack.other_connection()


async def _oversized_path(attack: Attack, size: int) -> None:
    oversized = attack.victim.oversized(size)
    if oversized is None:
        attack.not_applicable(f"{attack.plan.name!r} takes no string argument to make oversized")
        return
    subject, label = oversized
    await attack.start_attack()
    if _stopped(await attack.call(label, subject)):
        await attack.call(f"{label}, again", subject, connection=await _fresh_process(attack))


async def _malformed_answer(attack: Attack, answer: Any) -> None:
    victim = attack.victim
    first = await attack.ask(victim)
    if attack.failed:
        return
    await attack.start_attack()
    if not _stopped(await _send(attack, first, answer, None)):
        return
    other = await _fresh_process(attack)
    there = await attack.subject_on(other)
    if there is None:
        return
    again = await attack.ask(there, connection=other, label="ask the fresh process")
    if not attack.failed:
        await _send(attack, again, answer, other, there)


async def _send(
    attack: Attack, asked: Response, answer: Any, connection: Connection | None, subject: Any = None
) -> Response:
    params = {
        "name": attack.plan.name,
        "arguments": attack.arguments(subject if subject is not None else attack.victim),
        "requestState": asked.request_state,
        "inputResponses": {q.key: answer for q in asked.questions},
    }
    return await attack.call_raw("answers that are not elicitation results", params, connection=connection)
