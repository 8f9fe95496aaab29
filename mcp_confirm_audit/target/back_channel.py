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
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup
from mcp import types
from pydantic import ValidationError

from ..models import Outcome, Question, Response

# The prefix of every handle the harness hands out for a parked call: never a server's state.
HANDLE = "harness-parked-call:"
# A back-channel question's key: its method and its number on this connection.
KEY = "elicitation/create#"
# What the person says when a parked call is abandoned (the attack ended without answering).
_ABANDON = types.ElicitResult(action="cancel")


@dataclass
class _Asked:
    key: str
    params: types.ElicitRequestParams
    reply: Any = None
    answered: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class _Call:
    handle: str
    # What the call does next: a question, or its end (a Response).
    events: Any
    receive: Any
    asked: _Asked | None = None
    done: bool = False


class BackChannel:
    """The parked calls of one legacy connection, and the elicitation callback that parks them."""

    def __init__(self) -> None:
        # Where the parked calls run: set once the connection is open.
        self.tasks: TaskGroup | None = None
        self._numbers = itertools.count(1)
        self._keys = itertools.count(1)
        self._calls: dict[str, _Call] = {}
        # Calls in flight that are not waiting on a question: the next question is theirs.
        self._running: deque[_Call] = deque()
        # Every question the server sent when no call of the harness was in flight.
        self.stray: list[types.ElicitRequestParams] = []

    async def elicit(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """The SDK's elicitation callback: the question goes to its call; the answer comes from the technique."""
        if not self._running:
            self.stray.append(params)
            return types.ElicitResult(action="decline")
        call = self._running.popleft()
        asked = _Asked(f"{KEY}{next(self._keys)}", params)
        call.asked = asked
        await call.events.send(asked)
        await asked.answered.wait()
        reply = asked.reply
        if isinstance(reply, types.ElicitResult | types.ErrorData):
            return reply
        # A result of another kind (a roots result under the question's key): the client
        # could not process the request, which is what the server then hears.
        return types.ErrorData(code=types.INTERNAL_ERROR, message="the client could not process the request")

    def start(self, send: Any) -> _Call:
        """A tools/call in the background: `send()` returns its Response when the call ends."""
        events, receive = anyio.create_memory_object_stream[Any](8)
        call = _Call(f"{HANDLE}{next(self._numbers)}", events, receive)
        self._calls[call.handle] = call
        self._running.append(call)

        async def run() -> None:
            try:
                response = await send()
            finally:
                call.done = True
                if call in self._running:
                    self._running.remove(call)
            with call.events:
                await call.events.send(response)

        assert self.tasks is not None, "the connection opens the task group before any call"
        self.tasks.start_soon(run)
        return call

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
        self._running.append(call)
        asked.answered.set()

    async def next_event(self, call: _Call) -> Response:
        """What the call does next: asks again (round one again) or ends."""
        event = await call.receive.receive()
        if isinstance(event, _Asked):
            return asked_response(call.handle, event)
        self._calls.pop(call.handle, None)
        call.receive.close()
        response: Response = event
        return response

    async def abandon(self, wait: float) -> None:
        """Every call still waiting on a question is cancelled by the person, and given `wait` seconds to end."""
        left = [call for call in self._calls.values() if not call.done]
        for call in left:
            if call.asked is not None:
                self.answer(call, {call.asked.key: _ABANDON})
        with anyio.move_on_after(wait):
            for call in left:
                while not call.done:
                    await anyio.sleep(0.02)
        for call in left:
            self._calls.pop(call.handle, None)
            call.receive.close()

    def close(self) -> None:
        """The connection is closing: every stream of a call still open is closed with it."""
        for call in self._calls.values():
            call.events.close()
            call.receive.close()
        self._calls.clear()


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
