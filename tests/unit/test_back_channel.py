"""A legacy connection's parked calls: every question goes to a call someone waits for, and none is left behind.

The server is played here by the calls' own coroutines: each asks through the
elicitation callback exactly as the SDK hands it a server's `elicitation/create`,
and ends when the test says. Nothing is timed: each step waits for the event
it needs, and `fail_after` only turns a hang (the defect) into a failure.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from mcp import types

from mcp_confirm_audit.models import Outcome, Response
from mcp_confirm_audit.target.back_channel import ENDED_WITHOUT_RESULT, BackChannel
from mcp_confirm_audit.target.driver import _awaited

# A guard against the hang this file is about; never a measure of speed.
HANG = 10.0


@asynccontextmanager
async def back_channel() -> AsyncIterator[BackChannel]:
    """A back channel whose calls run in a task group of their own, every wait bounded by HANG."""
    with anyio.fail_after(HANG):
        async with anyio.create_task_group() as tasks:
            back = BackChannel()
            back.tasks = tasks
            yield back


ACCEPT = types.ElicitResult(action="accept", content={"confirm": True})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def question(name: str) -> types.ElicitRequestFormParams:
    schema: dict[str, Any] = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}
    return types.ElicitRequestFormParams(message=f"Delete {name}?", requested_schema=schema)


def asks(
    back: BackChannel, name: str, *, before: anyio.Event | None = None
) -> Callable[[], Awaitable[Response]]:
    """A call whose server asks about `name` (once `before` is set) and acts on what the person says."""

    async def call() -> Response:
        if before is not None:
            await before.wait()
        reply = await back.elicit(None, question(name))
        said = reply.action if isinstance(reply, types.ElicitResult) else "error"
        return Response(Outcome.COMPLETE, text=f"{name}: {said}")

    return call


def answer(response: Response) -> dict[str, types.ElicitResult]:
    return {response.questions[0].key: ACCEPT}


async def the_next_call_gets_its_own_question(back: BackChannel) -> None:
    """A new call is asked its own question, and the person's accept reaches it: nothing earlier took it."""
    second = back.start(asks(back, "b.txt"))
    round_one = await back.next_event(second)
    assert round_one.questions[0].message == "Delete b.txt?"
    back.answer(second, answer(round_one))
    assert (await back.next_event(second)).text == "b.txt: accept"


@pytest.mark.anyio
async def test_a_call_whose_server_stopped_waiting_takes_no_later_question() -> None:
    # The server's own deadline lapses before the person answers (a slow machine is enough):
    # the late answer hears the call's end, and the next call's question is that call's own.
    heard: list[object] = []
    gave_up = anyio.Event()
    with anyio.fail_after(HANG):
        async with anyio.create_task_group() as tasks, anyio.create_task_group() as handlers:
            back = BackChannel()
            back.tasks = tasks

            async def handled(params: types.ElicitRequestFormParams) -> None:
                # The SDK hands each question to the callback in a task of its own.
                heard.append(await back.elicit(None, params))

            async def expires() -> Response:
                handlers.start_soon(handled, question("a.txt"))
                await gave_up.wait()
                return Response(Outcome.TOOL_ERROR, text="no answer in time: nothing was deleted")

            first = back.start(expires)
            asked = await back.next_event(first)
            assert asked.outcome is Outcome.INPUT_REQUIRED
            gave_up.set()
            await first.ended.wait()
            # The callback the server stopped listening to is released, as the person cancelling.
            back.answer(first, answer(asked))
            late = await back.next_event(first)
            assert (late.outcome, late.text) == (Outcome.TOOL_ERROR, "no answer in time: nothing was deleted")

            await the_next_call_gets_its_own_question(back)
    assert [getattr(h, "action", h) for h in heard] == ["cancel"]


@pytest.mark.anyio
async def test_a_call_settled_before_it_asked_is_ended_and_its_late_question_is_not_the_next_calls() -> None:
    # The attack ended before the server asked (a slow server): settling cancels the call and
    # waits for its end, so the question it never got to send cannot reach the next attack's call.
    late = anyio.Event()
    async with back_channel() as back:
        slow = back.start(asks(back, "a.txt", before=late))
        ended_on_its_own = await back.abandon(0.0)
        assert not ended_on_its_own
        assert slow.done
        late.set()

        await the_next_call_gets_its_own_question(back)
    assert back.stray == []


@pytest.mark.anyio
async def test_a_parked_call_is_answered_cancel_when_settled_and_its_end_is_awaited() -> None:
    # The person walks away from a question: the server hears "cancel" and ends the call itself.
    async with back_channel() as back:
        parked = back.start(asks(back, "a.txt"))
        assert (await back.next_event(parked)).outcome is Outcome.INPUT_REQUIRED
        assert await back.abandon(HANG)
        assert parked.done
        assert back.parked(parked.handle) is None


@pytest.mark.anyio
async def test_a_round_cut_short_lets_go_of_its_call_and_a_round_on_it_ends_at_once() -> None:
    # A round's timeout (or the attack's budget) cancels the wait: the call is cancelled with it,
    # not left queued for a question that would then go to nobody.
    before = anyio.Event()
    async with back_channel() as back:
        cut = back.start(asks(back, "a.txt", before=before))
        with anyio.CancelScope() as round_trip:
            round_trip.cancel()
            await _awaited(back, cut)
        await cut.ended.wait()
        again = await back.next_event(cut)
        assert (again.outcome, again.text) == (Outcome.TRANSPORT, ENDED_WITHOUT_RESULT)
        before.set()

        await the_next_call_gets_its_own_question(back)


@pytest.mark.anyio
async def test_a_server_that_asks_twice_gets_both_answers_while_a_younger_call_waits_its_turn() -> None:
    # The oldest call not waiting takes the next question: after its first answer, the call
    # that asks again is older than the one sent after it.
    younger_asks = anyio.Event()
    async with back_channel() as back:

        async def twice() -> Response:
            first = await back.elicit(None, question("a.txt"))
            second = await back.elicit(None, question("a.txt, really"))
            assert isinstance(first, types.ElicitResult)
            assert isinstance(second, types.ElicitResult)
            return Response(Outcome.COMPLETE, text=f"{first.action}, then {second.action}")

        older = back.start(twice)
        younger = back.start(asks(back, "b.txt", before=younger_asks))
        asked = await back.next_event(older)
        back.answer(older, answer(asked))
        again = await back.next_event(older)
        assert again.questions[0].message == "Delete a.txt, really?"
        back.answer(older, answer(again))
        assert (await back.next_event(older)).text == "accept, then accept"

        younger_asks.set()
        round_one = await back.next_event(younger)
        assert round_one.questions[0].message == "Delete b.txt?"
        back.answer(younger, answer(round_one))
        assert (await back.next_event(younger)).text == "b.txt: accept"
