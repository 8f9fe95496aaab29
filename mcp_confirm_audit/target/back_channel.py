"""A legacy connection's questions, turned into rounds a technique can answer.

On 2025-06-18 and 2025-11-25 a server asks in the middle of a `tools/call`:
it sends `elicitation/create` to the client, waits for the reply, and only
then finishes the call. The harness is the person at that moment. So that
every family drives both eras the same way, a call that is asked is parked
at the question: round one returns an `input_required` response whose
`requestState` is the harness's own handle for the parked call, and "round
two" (the same handle, with an answer) replies to the server's request and
waits for what the call does next. Whatever a technique does between the two
(a swap on disk, a change through the target's tools) happens while the
server is really waiting: the real window between question and answer.

Over stdio a question carries nothing that names the call it belongs to, so
concurrent calls on one connection take questions in the order they were
sent (each question goes to the oldest call not already waiting).

A call the harness lets go of (its round timed out, the attack's budget ran
out, or the attack ended with it parked) is settled: its question is answered
"cancel", it is taken out of the queue questions are routed by, and it is given
the call timeout to end before its client side is cancelled and awaited. So no
question can go to a call nobody waits for, no round waits on a call that will
never send again, and a call that would not end is not left behind: its
connection is retired before the next attack (`settle` says so).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from pydantic import BaseModel, ValidationError

from ..models import Outcome, Question, Response

# The prefix of every handle the harness hands out for a parked call: never a server's state.
HANDLE = "harness-parked-call:"
# A back-channel question's key: its method and its number on this connection.
KEY = "elicitation/create#"
# What the person says when a parked call is abandoned (the attack ended without answering).
_ABANDON = types.ElicitResult(action="cancel")
# Seconds a call cancelled on the harness's side has to unwind: no server is waited for here.
_UNWIND = 1.0
# What a round hears of a call that ended without a result of its own (cancelled by the harness).
ENDED_WITHOUT_RESULT = "the call ended without a result: the harness cancelled it"


@dataclass
class _Asked:
    key: str
    params: types.ElicitRequestParams
    reply: Any = None
    answered: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class _Call:
    number: int
    handle: str
    # What the call does next: a question, or its end (a Response); closed when it ends.
    events: MemoryObjectSendStream[Any]
    receive: MemoryObjectReceiveStream[Any]
    asked: _Asked | None = None
    ended: anyio.Event = field(default_factory=anyio.Event)
    # The call's own task: cancelled when the harness lets go of a call that does not end.
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    # Let go of by the harness: no question is routed to it any more.
    settled: bool = False

    @property
    def done(self) -> bool:
        return self.ended.is_set()


class BackChannel:
    """The parked calls of one legacy connection, and the elicitation callback that parks them."""

    def __init__(self) -> None:
        # Where the parked calls run: set once the connection is open.
        self.tasks: TaskGroup | None = None
        self._numbers = itertools.count(1)
        self._keys = itertools.count(1)
        self._calls: dict[str, _Call] = {}
        # Calls in flight that are not waiting on a question, oldest first: the next question is theirs.
        self._running: list[_Call] = []
        # Every question the server sent when no call of the harness was in flight.
        self.stray: list[types.ElicitRequestParams] = []

    async def elicit(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """The SDK's elicitation callback: the question goes to its call; the answer comes from the technique."""
        if not self._running:
            self.stray.append(params)
            return types.ElicitResult(action="decline")
        call = self._running.pop(0)
        asked = _Asked(f"{KEY}{next(self._keys)}", params)
        call.asked = asked
        try:
            call.events.send_nowait(asked)
        except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
            # Nobody reads this call any more: the person cancels rather than leave the server waiting.
            return _ABANDON
        await asked.answered.wait()
        reply = _retyped(asked.reply)
        if isinstance(reply, types.ElicitResult | types.ErrorData):
            return reply
        # A result of another kind (a roots result under the question's key): the client
        # could not process the request, which is what the server then hears.
        return types.ErrorData(code=types.INTERNAL_ERROR, message="the client could not process the request")

    def start(self, send: Any) -> _Call:
        """A tools/call in the background: `send()` returns its Response when the call ends."""
        events, receive = anyio.create_memory_object_stream[Any](8)
        number = next(self._numbers)
        call = _Call(number, f"{HANDLE}{number}", events, receive)
        self._calls[call.handle] = call
        self._running.append(call)

        async def run() -> None:
            response = Response(Outcome.TRANSPORT, text=ENDED_WITHOUT_RESULT)
            try:
                with call.scope:
                    response = await send()
            finally:
                # Ended however it ended: no question is routed to it, and a callback still
                # holding its question is released (the server stopped waiting, or the call was cancelled).
                self._let_go(call)
                call.ended.set()
                # Nobody may wait for this call's end any more: then it is not sent.
                with (
                    call.events,
                    suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError),
                ):
                    call.events.send_nowait(response)

        assert self.tasks is not None, "the connection opens the task group before any call"
        self.tasks.start_soon(run)
        return call

    @property
    def asking(self) -> bool:
        """Whether a question of the server's is open: a call of the harness's parked at it, unanswered."""
        return any(call.asked is not None and not call.done for call in self._calls.values())

    def release(self, call: _Call) -> None:
        """Nobody waits for `call` now, though it runs on to its end (a probe a busy server answers later)."""
        self._let_go(call)

    def parked(self, handle: str | None) -> _Call | None:
        """The call a round-two request resumes, if `handle` is one of the harness's."""
        if handle is None or not handle.startswith(HANDLE):
            return None
        return self._calls.get(handle)

    def answer(self, call: _Call, responses: Mapping[str, Any] | None) -> None:
        """Reply to the question `call` waits on; None: wait without answering (a person who never answers)."""
        asked = call.asked
        if asked is None or responses is None:
            return
        # No answer under the question's key: the client had nothing to reply with.
        asked.reply = _typed(responses.get(asked.key))
        call.asked = None
        if not call.done and not call.settled:
            # Its next question, if it asks again, is its own; a call that ended asks nothing more.
            self._queue(call)
        asked.answered.set()

    async def next_event(self, call: _Call) -> Response:
        """What the call does next: asks again (round one again) or ends."""
        try:
            event = await call.receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            event = Response(Outcome.TRANSPORT, text=ENDED_WITHOUT_RESULT)
        if isinstance(event, _Asked):
            return asked_response(call.handle, event)
        self._calls.pop(call.handle, None)
        call.receive.close()
        response: Response = event
        return response

    def drop(self, call: _Call) -> None:
        """The round waiting on `call` was cut short: nobody waits for it now, so it is cancelled at once."""
        self._let_go(call)
        call.scope.cancel()

    async def abandon(self, wait: float) -> bool:
        """Every call not ended is cancelled by the person and given `wait` seconds to end; False if one would not.

        A call that outlives its `wait` is cancelled on the harness's side, and that is
        awaited: none is left running. False says the server may still send for it.
        """
        left = [call for call in self._calls.values() if not call.done]
        for call in left:
            self._let_go(call)
        with anyio.move_on_after(wait):
            for call in left:
                await call.ended.wait()
        stuck = [call for call in left if not call.done]
        for call in stuck:
            call.scope.cancel()
        with anyio.move_on_after(_UNWIND):
            for call in stuck:
                await call.ended.wait()
        # The attack is over: no round resumes any of its calls (a handle it held is answered once).
        for call in self._calls.values():
            call.receive.close()
        self._calls.clear()
        return not stuck

    def close(self) -> None:
        """The connection is closing: every stream of a call still open is closed with it."""
        for call in self._calls.values():
            call.events.close()
            call.receive.close()
        self._calls.clear()
        self._running.clear()

    def _queue(self, call: _Call) -> None:
        """Back in line for a question, in the order the calls were sent."""
        self._running.append(call)
        self._running.sort(key=lambda c: c.number)

    def _let_go(self, call: _Call) -> None:
        """No question goes to `call` any more; one it holds is answered as the person cancelling."""
        call.settled = True
        if call in self._running:
            self._running.remove(call)
        asked, call.asked = call.asked, None
        if asked is not None and not asked.answered.is_set():
            asked.reply = _ABANDON
            asked.answered.set()


def asked_response(handle: str, asked: _Asked) -> Response:
    params = asked.params
    schema = getattr(params, "requested_schema", None)
    url = getattr(params, "url", None)
    message = params.message if url is None else f"{params.message} ({url})"
    question = Question(key=asked.key, method="elicitation/create", message=message, schema=schema)
    return Response(
        Outcome.INPUT_REQUIRED,
        text="asked the user (elicitation/create over the back channel)",
        questions=(question,),
        request_state=handle,
    )


def _typed(reply: Any) -> Any:
    """An answer as the callback returns it: typed, or validated from the JSON a raw request carries."""
    if isinstance(reply, Mapping):
        try:
            return types.ElicitResult.model_validate(dict(reply))
        except ValidationError:
            return types.ErrorData(code=types.INVALID_PARAMS, message="the client sent a malformed answer")
    return reply


def _retyped(reply: Any) -> Any:
    """`reply` as this SDK's own type, when it is the same model built from another import of the SDK.

    A second in-process pytest run (pytester) imports `mcp.types` again: an answer a module kept from
    the first run built is then an ElicitResult of another class, which the SDK would not send.
    """
    if isinstance(reply, types.ElicitResult | types.ErrorData) or not isinstance(reply, BaseModel):
        return reply
    kinds: dict[str, type[BaseModel]] = {"ElicitResult": types.ElicitResult, "ErrorData": types.ErrorData}
    kind = kinds.get(type(reply).__name__)
    return kind.model_validate(reply.model_dump(by_alias=True)) if kind is not None else reply
