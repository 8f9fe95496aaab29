"""Talking to the target as a real client: the SDK `Client`, rounds by hand.

Every request goes through the target's real request-state boundary: over
stdio, over Streamable HTTP, or in-process through `Client(server)`, which
runs the whole middleware chain. `MCPServer.call_tool` is never used: it
bypasses the middleware and hides exactly what this harness measures.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib
import importlib.util
import math
import os
import re
import shutil
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from pydantic import TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from .. import __version__
from ..channels.base import Place
from ..channels.terminal import Pty
from ..confirmations.elicitation import LEGACY, MODERN
from ..errors import CredentialsRefused, TargetError, UsageError
from ..models import Exchange, Outcome, Phase, Question, Response
from ..profile import headers as http_headers
from ..profile.headers import Header
from ..profile.loader import Profile
from . import confine, launch, netns, race, reaper
from .back_channel import HANDLE, BackChannel
from .confine_main import EXITED
from .sdk_adapter import DeclaringClient, http_client, negotiated_version
from .startup import StdoutChecked, exit_status, nothing_listens
from .zygote import Zygote

_RAW_RESULT = TypeAdapter(dict[str, Any])

# Seconds a target the harness started has to exit once its stdin is closed,
# before its whole tree is killed.
EXIT_GRACE = 1.0
# A process is killed at its start deadline; the handshake itself is
# cancelled a little later, in case the kill does not end it.
_BACKSTOP = 1.0
# What a credentials refusal says, first: a Response that starts so is never a refusal by the target.
CREDENTIALS_REFUSED = "the target refused the harness's credentials"
PRIMARY_HINT = "set headers: in the profile or pass --mcp-header"
# An auth scheme is a token (RFC 9110); whatever else a target put in the header is not shown.
_AUTH_SCHEME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}")


# The SDK's own timeout of a tools/call that `Connection._guarded` bounds: none (an infinite deadline
# schedules no timer). The SDK's backstop (the client's read_timeout_seconds) is longer than any
# bound of the harness's, so under `_guarded`'s scope it could never fire first; it only added a timer
# to the loop's heap on every round trip. Not for a call run outside `_guarded` (a legacy call's task).
_BOUNDED_BY_THE_HARNESS = math.inf

# What comes before the last lines of a target's stderr wherever a reason quotes them.
STDERR_SAID = "; target stderr: "


# What a round trip may fail with that the harness reads into its vocabulary (`Connection._failed`),
# in the order read; anything else propagates.
_FAILURES = (
    MCPError,
    RuntimeError,
    # The SDK checks a result against the negotiated era's schema before it returns it; a target (or a
    # proxy in front of it) that writes its own results in an older era's shape fails that check.
    ValidationError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    OSError,
)


# How a round trip that got no answer in time is worded: the call may still be waiting for someone.
NO_ANSWER = "no answer within"


def got_no_answer(response: Response) -> bool:
    """Whether the target left the request unanswered past its bound (alive, perhaps waiting for a person)."""
    return response.outcome is Outcome.TRANSPORT and response.text.startswith(NO_ANSWER)


class _RawToolCall(types.Request[dict[str, Any] | None, str]):
    """A tools/call whose params the harness writes itself.

    For what the typed API refuses to send (a non-string requestState, an
    answer that is not a valid ElicitResult); the SDK still stamps the
    protocol envelope, so the target sees an otherwise normal request.
    """


@dataclass(frozen=True, slots=True)
class ToolInfo:
    name: str
    description: str
    input_schema: Mapping[str, Any]
    read_only: bool | None
    destructive: bool | None
    output_schema: Mapping[str, Any] | None = None


class Refusals:
    """HTTP 401 and 403 answers one connection's HTTP client has seen.

    The SDK's transport turns them into a generic "Server returned an error
    response"; this hook on the client keeps the status, and the auth scheme the
    target asked for, so the harness can say what actually happened.
    """

    def __init__(self, hint: str = PRIMARY_HINT) -> None:
        self.count = 0
        self.seen = ""
        self.hint = hint

    async def record(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            self.count += 1
            scheme = _AUTH_SCHEME.match(response.headers.get("www-authenticate", "").strip())
            asked = f", WWW-Authenticate: {scheme.group(0)}" if scheme else ""
            self.seen = f"HTTP {response.status_code}{asked}"

    @property
    def line(self) -> str:
        return f"{CREDENTIALS_REFUSED} ({self.seen}): {self.hint}"


@dataclass(frozen=True, slots=True)
class Sent:
    """A tools/call as it went to a target, kept for `bench`'s floor to send again (`Connection.sent`)."""

    # The process it went to: connections attached to one process share it.
    process: Any
    # perf_counter seconds it was sent and came back: calls in flight together overlap.
    started: float
    ended: float
    request: Mapping[str, Any]
    # Sent on a handshake-era connection, where a question's answer is no tools/call of its own.
    legacy: bool = False
    # The client connection it went over (one process may have several: another agent's session).
    client: int = 0
    # The requestState its reply carried: a later request that sends it back continues this one.
    state_back: str | None = None


class Connection:
    """One live client connection to one target process."""

    def __init__(
        self,
        name: str,
        client: Client,
        call_timeout: float,
        stderr_path: Path | None,
        endpoint: Any = None,
        *,
        refusals: Refusals | None = None,
        secrets: Sequence[str] = (),
        back: BackChannel | None = None,
        answer_deadline: float | None = None,
        answer_after: float = 0.0,
    ) -> None:
        self.name = name
        self.client = client
        self.call_timeout = call_timeout
        # The target's own deadline for its person (`answer_deadline`), when it waits longer than a round trip.
        self.answer_deadline = answer_deadline
        # The person's pace (`answer_after`): no answer to a question goes sooner than this after it was asked.
        self.answer_after = answer_after
        # When each question on this connection was asked, by its state (MRTR's, or a parked call's handle).
        self._asked_at: dict[str, float] = {}
        self.stderr_path = stderr_path
        self.refusals = refusals or Refusals()
        # Header values to mask in any text of the target's this connection keeps.
        self.secrets = tuple(secrets)
        # What another client of the same process attaches to (a URL, an
        # in-process server); None over stdio, where a process has one connection.
        self.endpoint = endpoint
        self.alive = True
        # The target's controlling terminal as the person sees it (`tty: true`); None: it has none.
        self.terminal: Pty | None = None
        self.round_trips = 0
        self.listings = 0
        # Wall seconds with at least one of this connection's calls in flight (concurrent ones counted
        # once): the time the harness waited on its own requests, which `bench` sets against the rest.
        self.waited_on = 0.0
        self._in_flight = 0
        self._busy_from = 0.0
        # Where every tools/call this connection sends is kept (`bench` only); None: kept nowhere.
        self.sent: list[Sent] | None = None
        # The process a kept call went to (`Sent.process`): the endpoint, or this connection's own.
        process = self if endpoint is None else endpoint
        self._process: Any = process if isinstance(process, str) else id(process)
        # The protocol version negotiated; on a legacy one, questions come over the back channel.
        self.era = negotiated_version(client) or MODERN
        self.back = back if self.era != MODERN else None

    @property
    def unanswered_timeout(self) -> float:
        """The bound of a round nobody answers: the target's own deadline for its person, then a round trip."""
        return self.call_timeout + (self.answer_deadline or 0.0)

    @property
    def legacy(self) -> bool:
        """Whether this connection speaks a handshake era (questions are elicitation/create requests)."""
        return self.back is not None

    def places(self) -> dict[str, Place]:
        """Each server of this connection by name, for a person's step that names one: none for one server."""
        return {}

    async def list_tools(self) -> list[ToolInfo]:
        refused = self.refusals.count
        try:
            with anyio.fail_after(self.call_timeout):
                listing = await self.client.session.list_tools()
        except TimeoutError:
            self.alive = False
            raise TargetError(
                f"the target did not answer tools/list within {self.call_timeout:g}s{self._stderr_hint()}"
            ) from None
        except MCPError as exc:
            if self.refusals.count > refused:
                raise CredentialsRefused(self.refusals.line) from None
            self.alive = exc.code not in (CONNECTION_CLOSED, REQUEST_TIMEOUT)
            raise TargetError(f"the target failed tools/list: {exc.message}{self._stderr_hint()}") from None
        self.round_trips += 1
        self.listings += 1
        tools = []
        for tool in listing.tools:
            notes = tool.annotations
            tools.append(
                ToolInfo(
                    name=tool.name,
                    description=tool.description or "",
                    input_schema=tool.input_schema or {},
                    read_only=notes.read_only_hint if notes else None,
                    destructive=notes.destructive_hint if notes else None,
                    output_schema=tool.output_schema,
                )
            )
        return tools

    async def call(
        self,
        phase: Phase,
        label: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        state: str | None = None,
        responses: Mapping[str, Any] | None = None,
        unanswered: bool = False,
    ) -> Exchange:
        """A typed tools/call through the SDK session, recorded.

        `unanswered`: nobody will answer while it waits, so it may take the target's own
        deadline for its person (`unanswered_timeout`) rather than a round trip's.
        """
        request = _request_record(tool, arguments, state, responses)
        timeout = self.unanswered_timeout if unanswered else self.call_timeout
        if responses is not None:
            await self.paced(state)
        if self.back is not None:
            return await self._legacy_call(
                phase, label, request, tool, arguments, state, responses, timeout=timeout
            )

        async def send() -> Response:
            result = await self.client.session.call_tool(
                tool,
                dict(arguments),
                allow_input_required=True,
                input_responses=dict(responses) if responses is not None else None,
                request_state=state,
                meta=race.meta(),  # type: ignore[arg-type]  # a key of the harness's own
                read_timeout_seconds=_BOUNDED_BY_THE_HARNESS,
            )
            return response_from_typed(result)

        return await self._exchange(phase, label, request, send, timeout=timeout)

    async def _legacy_call(
        self,
        phase: Phase,
        label: str,
        request: Mapping[str, Any],
        tool: str,
        arguments: Mapping[str, Any],
        state: str | None,
        responses: Mapping[str, Any] | None,
        *,
        timeout: float | None = None,
    ) -> Exchange:
        """A call on a handshake-era connection: started and parked at its question, or resumed with an answer."""
        back = self.back
        assert back is not None
        parked = back.parked(state)
        if parked is not None:

            async def resume() -> Response:
                back.answer(parked, responses)
                return await _awaited(back, parked)

            # The answer goes back as the reply to the server's question: no tools/call is sent.
            return await self._exchange(phase, label, request, resume, timeout=timeout, sends=False)
        if state is not None and state.startswith(HANDLE):
            # Nothing reached the target: a legacy question is answered once, as the reply to it.
            said = (
                "no call of the harness waits on this question any more (a legacy question is answered once)"
            )
            record = Exchange(phase, label, self.name, request, Response(Outcome.TRANSPORT, text=said))
            return record

        async def send() -> Response:
            result = await self.client.session.call_tool(tool, dict(arguments))
            return response_from_typed(result)

        async def started() -> Response:
            return await _awaited(back, back.start(lambda: self._outcome(send)))

        return await self._exchange(phase, label, request, started, timeout=timeout)

    def asking_for(self, tool: str) -> bool:
        """Whether the server that serves `tool` has a question open here (a legacy call parked at it)."""
        return self.back is not None and self.back.asking

    async def call_within(
        self, phase: Phase, label: str, tool: str, arguments: Mapping[str, Any], bound: float
    ) -> Exchange | None:
        """A call while a question is open, waited for `bound` seconds; None if it did not come back by then.

        Not a lost connection: a server that serves one request at a time answers it once its
        question ends, and the call runs on to that end with nobody waiting for it.
        """
        back = self.back
        assert back is not None, "only a legacy connection holds a question open"
        request = _request_record(tool, arguments, None, None)

        async def send() -> Response:
            result = await self.client.session.call_tool(tool, dict(arguments))
            return response_from_typed(result)

        started = time.perf_counter()
        call = back.start(lambda: self._outcome(send))
        with anyio.move_on_after(bound):
            await call.ended.wait()
        if not call.done:
            back.release(call)
            return None
        response = await _awaited(back, call)
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        return Exchange(phase, label, self.name, request, response, elapsed)

    async def settle(self) -> None:
        """Every call not ended is cancelled by the person, and given a call timeout to end.

        Bounded whatever the target does: a call that did not end is cancelled on the
        harness's side and awaited. Its server may still send for it, so the connection is
        then retired (not alive): nothing it says later can reach the next attack's calls.
        """
        if self.back is not None and not await self.back.abandon(self.call_timeout):
            self.alive = False

    async def call_raw(self, phase: Phase, label: str, params: Mapping[str, Any]) -> Exchange:
        """A tools/call with hand-written params, for what the typed API cannot express."""
        request = {"method": "tools/call", **params}
        if params.get("inputResponses") is not None:
            state = params.get("requestState")
            await self.paced(state if isinstance(state, str) else None)
        if self.back is not None:
            # Over the back channel an answer is the reply to the server's request, so the
            # hand-written answer goes there, as JSON.
            state = params.get("requestState")
            answers = params.get("inputResponses")
            return await self._legacy_call(
                phase,
                label,
                request,
                str(params.get("name")),
                params.get("arguments") or {},
                state if isinstance(state, str) else None,
                answers if isinstance(answers, Mapping) else None,
            )

        announced = race.meta()
        sent = dict(params) if announced is None else {**params, "_meta": announced}

        async def send() -> Response:
            raw = await self.client.session.send_request(
                # A plain dict is what a raw channel wants back; the SDK's bound is narrower.
                _RawToolCall(method="tools/call", params=sent),
                _RAW_RESULT,  # type: ignore[type-var]
                request_read_timeout_seconds=_BOUNDED_BY_THE_HARNESS,
            )
            return response_from_result(raw)

        return await self._exchange(phase, label, request, send)

    async def _exchange(
        self,
        phase: Phase,
        label: str,
        request: Mapping[str, Any],
        send: Any,
        *,
        timeout: float | None = None,
        sends: bool = True,
    ) -> Exchange:
        started = time.perf_counter()
        if not self.alive:
            response = Response(Outcome.TRANSPORT, text="connection already lost earlier in this attack")
        else:
            self._in_flight += 1
            if self._in_flight == 1:
                self._busy_from = started
            back: str | None = None
            try:
                response = await self._guarded(send, timeout)
                back = response.request_state
            finally:
                self._in_flight -= 1
                ended = time.perf_counter()
                if self._in_flight == 0:
                    self.waited_on += ended - self._busy_from
                if self.sent is not None and sends:
                    legacy = self.back is not None
                    self.sent.append(
                        Sent(
                            self._process,
                            started,
                            ended,
                            request,
                            legacy=legacy,
                            client=id(self),
                            state_back=back,
                        )
                    )
            self.round_trips += 1
            if self.answer_after > 0 and response.outcome is Outcome.INPUT_REQUIRED and response.questions:
                # Only a person's pace (`paced`) reads when a question was asked: kept for nothing else.
                self._asked_at[response.request_state or ""] = anyio.current_time()
        elapsed = (time.perf_counter() - started) * 1000
        return Exchange(phase, label, self.name, request, response, round(elapsed, 1))

    async def _guarded(self, send: Any, timeout: float | None = None) -> Response:
        """What `send()` came back with within the round trip's bound, or that nothing came back in time."""
        refused = self.refusals.count
        bound = self.call_timeout if timeout is None else timeout
        response: Response | None = None
        # A cancel scope of its own rather than `anyio.fail_after` (two generator context managers
        # and a backend lookup each), in this coroutine rather than one more: every round trip of the
        # audit passes here.
        with deadline_in(bound):
            # `_outcome`'s work, in this coroutine rather than one more.
            try:
                response = await send()
            except _FAILURES as exc:
                response = self._failed(exc)
        if response is None:
            # Only this scope's deadline ends the block without a response: an outer cancel propagates.
            self.alive = False
            response = Response(Outcome.TRANSPORT, text=f"{NO_ANSWER} {bound:g}s{self._stderr_hint()}")
        if self.refusals.count > refused and response.outcome in (Outcome.RPC_ERROR, Outcome.TRANSPORT):
            # Not the target's answer to the attack: it never let the request in. Never a refusal.
            return Response(Outcome.TRANSPORT, text=self.refusals.line)
        return response

    async def _outcome(self, send: Any) -> Response:
        """What `send()` came back with, its failures read into the harness's vocabulary."""
        try:
            response: Response = await send()
            return response
        except _FAILURES as exc:
            return self._failed(exc)

    def _failed(self, exc: Exception) -> Response:
        """A failure of a round trip (one of `_FAILURES`) in the harness's vocabulary."""
        if isinstance(exc, MCPError):
            if exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT) and exc.message.startswith(
                ("Connection closed", "Request")
            ):
                self.alive = False
                return Response(Outcome.TRANSPORT, text=f"{exc.message}{self._stderr_hint()}")
            return Response(Outcome.RPC_ERROR, text=exc.message, code=exc.code, data=exc.error.data)
        if isinstance(exc, ValidationError):
            # The target answered, and the connection still works; but no client of this era can read
            # the reply, so it is neither an answer nor a refusal.
            return Response(Outcome.TRANSPORT, text=self._unreadable(exc))
        if isinstance(exc, RuntimeError):
            # The SDK re-validates a successful result against the tool's
            # outputSchema; the target still answered (and acted) normally.
            return Response(Outcome.COMPLETE, text=f"(result rejected by the client: {exc})")
        # The connection's streams closed or broke, or the OS refused.
        self.alive = False
        return Response(Outcome.TRANSPORT, text=f"{type(exc).__name__}: {exc}{self._stderr_hint()}")

    def _unreadable(self, exc: ValidationError) -> str:
        """Why the SDK rejected a reply, in one line, and what lets a client read it."""
        errors = exc.errors(include_url=False)
        where = ".".join(str(part) for part in errors[0]["loc"]) if errors else ""
        why = f"{where or 'the result'}: {errors[0]['msg'] if errors else 'invalid'}"
        hint = (
            f"; a server or proxy that writes results in an older era's shape: pin that era in a profile "
            f"(protocol: '{LEGACY[0]}')"
            if self.era == MODERN
            else ""
        )
        return f"a reply no client of {self.era} can read ({why}){hint}"

    async def paced(self, state: str | None) -> None:
        """The person reads before answering: an answer to a question asked here waits out `answer_after`.

        Outside any round's bound (the time is the person's, not the target's): a server that refuses
        an answer faster than a person reads (magnemo-mcp's 300 ms) then hears one at a human pace.
        An answer to no question of this connection's (a forged state) is sent at once.
        """
        asked = self._asked_at.get(state or "") if self.answer_after > 0 else None
        if asked is not None and (left := asked + self.answer_after - anyio.current_time()) > 0:
            await anyio.sleep(left)

    def _stderr_hint(self) -> str:
        tail = stderr_tail(self.stderr_path, secrets=self.secrets)
        return f"{STDERR_SAID}{tail}" if tail else ""


def deadline_in(seconds: float) -> anyio.CancelScope:
    """A cancel scope whose deadline is `seconds` from now: `anyio.move_on_after(seconds)`, in fewer calls.

    Every round trip and every attack makes one. The harness's event loop is asyncio's (the
    session's world makes one), where anyio's clock is the loop's own:
    the deadline is read from it, and the scope made by asyncio's scope class, without anyio's
    backend lookups.
    """
    loop = asyncio.get_running_loop()
    return _scope_class()(deadline=loop.time() + seconds)


@functools.cache
def _scope_class() -> type[anyio.CancelScope]:
    """The class of the cancel scopes anyio makes on asyncio (`anyio.CancelScope()` returns one)."""
    return type(anyio.CancelScope())


async def _awaited(back: BackChannel, call: Any) -> Response:
    """What a legacy call does next; a round cut short (its timeout, the attack's budget) lets go of the call."""
    try:
        return await back.next_event(call)
    except anyio.get_cancelled_exc_class():
        back.drop(call)
        raise


def stderr_tail(path: Path | None, lines: int = 3, *, secrets: Iterable[str] = ()) -> str:
    """The last lines a target wrote, with every secret the harness holds (header values) masked."""
    if path is None or not path.exists():
        return ""
    text = http_headers.scrub_values(path.read_text(errors="replace"), secrets).strip().splitlines()
    said: list[str] = []
    routine = False
    for line in text:
        # A routine record and the indented lines a handler wrapped it onto (rich's) go together.
        routine = bool(_ROUTINE_LOG.match(line)) or (routine and line[:1].isspace())
        if line.strip() and not routine and not line.startswith(EXITED):
            said.append(line)
    return " | ".join(line.strip() for line in said[-lines:])[:600]


# A log record at INFO or DEBUG in the shapes Python's logging and its usual handlers print
# (`INFO:name:message`, `[time] INFO     message`, `2026-12-07 10:00:00,123 - name - INFO - message`):
# a server's routine account of its requests, never why one failed, and it crowds out the lines that are.
_ROUTINE_LOG = re.compile(
    r"(?:INFO|DEBUG):"  # logging's default format
    r"|\s*(?:\[[^\]]*\]\s*)?(?:INFO|DEBUG)\s{2,}"  # a rich or padded handler, its time first
    r"|\d{4}-\d\d-\d\d[ T][\d:.,]+\s+-\s+(?:[\w.]+\s+-\s+)?(?:INFO|DEBUG)\s+-\s"  # time - name - LEVEL -
)


def _request_record(
    tool: str, arguments: Mapping[str, Any], state: str | None, responses: Mapping[str, Any] | None
) -> dict[str, Any]:
    record: dict[str, Any] = {"method": "tools/call", "name": tool, "arguments": dict(arguments)}
    if state is not None:
        record["requestState"] = state
    if responses is not None:
        record["inputResponses"] = {
            key: value.model_dump(by_alias=True, mode="json", exclude_none=True)
            if hasattr(value, "model_dump")
            else value
            for key, value in responses.items()
        }
    return record


def response_from_result(raw: Mapping[str, Any]) -> Response:
    """Read a tools/call result (typed or raw) into the harness's vocabulary."""
    if raw.get("resultType") == "input_required" or "inputRequests" in raw:
        questions = []
        for key, request in (raw.get("inputRequests") or {}).items():
            params = request.get("params") or {}
            questions.append(
                Question(
                    key=key,
                    method=request.get("method", ""),
                    message=params.get("message"),
                    schema=params.get("requestedSchema"),
                    url=params.get("url") if params.get("mode") == "url" else None,
                )
            )
        return _asked(questions, raw.get("requestState"))
    text = " ".join([item.get("text", "") for item in raw.get("content") or [] if item.get("type") == "text"])
    outcome = Outcome.TOOL_ERROR if raw.get("isError") else Outcome.COMPLETE
    return Response(outcome, text=text.strip(), structured=raw.get("structuredContent"))


def _read_question(key: str, request: Any) -> Question | None:
    """An elicitation as `response_from_result` reads its JSON, the form's schema as the dump writes it.

    None: not an elicitation of the SDK's own classes, read from its JSON instead.
    """
    if type(request) is not types.ElicitRequest:
        return None
    params = request.params
    if type(params) is types.ElicitRequestFormParams:
        # JSON values, a NaN or an infinity as null: what `model_dump(mode="json")` makes of the schema.
        schema = to_jsonable_python(params.requested_schema, inf_nan_mode="null")
        return Question(key=key, method=request.method, message=params.message, schema=schema)
    if type(params) is types.ElicitRequestURLParams:
        return Question(key=key, method=request.method, message=params.message, url=params.url)
    return None


def _asked(questions: list[Question], state: str | None) -> Response:
    return Response(
        Outcome.INPUT_REQUIRED,
        text="asked the user" if questions else "input_required without questions",
        questions=tuple(questions),
        request_state=state,
    )


def response_from_typed(result: types.CallToolResult | types.InputRequiredResult | types.Result) -> Response:
    """`response_from_result` of the SDK's typed result as JSON, a question read from its fields.

    Most replies of an audit are a question (an `InputRequiredResult`), and dumping one whole as JSON
    (its meta, its long requestState) cost more than all the rest of reading it. Its elicitations are
    read from their fields instead (`_read_question`); a reply asking anything else, and any other
    result, is dumped.
    """
    if type(result) is types.InputRequiredResult:
        read = [_read_question(key, request) for key, request in (result.input_requests or {}).items()]
        questions = [question for question in read if question is not None]
        if len(questions) == len(read):
            return _asked(questions, result.request_state)
    return response_from_result(result.model_dump(by_alias=True, mode="json", exclude_none=True))


@asynccontextmanager
async def connect(
    profile: Profile,
    root: Path,
    logs: Path,
    name: str,
    *,
    ablate: bool = False,
    elicitation: str = "form+url",
    protocol: str | None = None,
    zygote: Zygote | None = None,
) -> AsyncIterator[Connection]:
    """Start (or reach) the target and open a session with it, in `protocol`'s era (the profile's by default).

    `ablate` builds an in-process target without the SDK's request-state
    boundary, to see which of its other layers refuse an attack on their own.
    `zygote`: a stdio target's process is forked from it (the launcher starts its relay).
    """
    stderr_path: Path | None = None
    pty: Pty | None = None
    # Only a target the harness starts as a process is its to watch and kill.
    target: reaper.TargetProcesses | None = None
    async with AsyncExitStack() as stack:
        if not profile.is_url and not profile.is_in_process:
            target = reaper.TargetProcesses(f"{root.parent.name}/{name}")
            # Runs last, after the SDK (or the launcher) has stopped the target:
            # whatever it left behind (children, daemons) goes too.
            stack.push_async_callback(target.kill)
        if profile.is_url:
            server: Any = profile.command
        elif profile.is_in_process:
            server = _build_in_process(profile, root, ablate=ablate)
        elif profile.serves_http:
            assert target is not None
            stderr_path = logs / f"{name}.stderr"
            pty = _terminal(profile, stack)
            regime = confine.regime(profile)
            confined = functools.partial(confine.wrap, regime, base=root.parent, cwd=root)
            server = await stack.enter_async_context(
                launch.serve_http(
                    profile,
                    root,
                    _target_env(profile, root, target.token),
                    stderr_path,
                    wrap=_hosted(pty, confined),
                    net=netns.shared() if regime.shared else None,
                )
            )
        else:
            assert target is not None
            params = _stdio_params(profile, root, target.token)
            if zygote is not None:
                # The relay runs beside the harness; the zygote it reaches was started confined.
                relayed = zygote.relayed([params.command, *params.args])
                params = params.model_copy(update={"command": relayed[0], "args": relayed[1:]})
            else:
                argv = confine.wrap(
                    confine.regime(profile), [params.command, *params.args], root.parent, root
                )
                params = params.model_copy(update={"command": argv[0], "args": argv[1:]})
            pty = _terminal(profile, stack)
            if pty is not None:
                hosted = pty.hosted([params.command, *params.args])
                params = params.model_copy(update={"command": hosted[0], "args": hosted[1:]})
            # The target's stderr goes to the sandbox's log folder, not over
            # the test runner's terminal; it is evidence when a target fails.
            stderr_path = logs / f"{name}.stderr"
            errlog = stack.enter_context(stderr_path.open("w"))
            server = StdoutChecked(stdio_client(params, errlog=errlog))
        endpoint = server if isinstance(server, str) or profile.is_in_process else None
        async with _session(
            profile, server, name, stderr_path, endpoint, target, elicitation, protocol=protocol
        ) as connection:
            connection.terminal = pty
            yield connection


@asynccontextmanager
async def attach(
    profile: Profile,
    endpoint: Any,
    name: str,
    *,
    headers: Sequence[Header] | None = None,
    hint: str = PRIMARY_HINT,
    protocol: str | None = None,
    elicitation: str = "form+url",
) -> AsyncIterator[Connection]:
    """Another client connection to a process already running (a URL, an in-process server).

    `headers` replace the profile's on this connection (another identity's), and
    `hint` is what a refusal of them tells the user to set; `elicitation` is what it declares.
    """
    async with _session(
        profile,
        endpoint,
        name,
        None,
        endpoint,
        None,
        elicitation,
        headers=headers,
        hint=hint,
        protocol=protocol,
    ) as connection:
        yield connection


@asynccontextmanager
async def _session(
    profile: Profile,
    server: Any,
    name: str,
    stderr_path: Path | None,
    endpoint: Any,
    target: reaper.TargetProcesses | None = None,
    elicitation: str = "form+url",
    *,
    headers: Sequence[Header] | None = None,
    hint: str = PRIMARY_HINT,
    protocol: str | None = None,
) -> AsyncIterator[Connection]:
    sent = tuple(profile.headers if headers is None else headers)
    protocol = protocol or profile.protocol
    secrets = (*profile.secrets(), *http_headers.secret_values(sent))
    refusals = Refusals(hint)
    http: httpx2.AsyncClient | None = None
    if isinstance(server, str):
        # The SDK's own client and timeouts, carrying the headers on every request
        # (the POSTs, the GET stream, the closing DELETE), and a hook that sees a 401.
        http = http_client(http_headers.as_dict(sent))
        http.event_hooks = {"response": [refusals.record]}
        server = streamable_http_client(server, http_client=http)
    back = BackChannel()
    client = DeclaringClient(
        server,
        mode="legacy" if protocol in LEGACY else protocol,
        declares=elicitation,
        handshake=protocol if protocol in LEGACY else None,
        elicitation_callback=back.elicit,
        client_info=types.Implementation(name="mcp-confirm-audit", version=__version__),
        # The SDK's own backstop, past the harness's bound of any round (a round nobody answers is the longest)
        # and of the handshake: below the start bound, a slow start (a loaded machine, a raised
        # start_timeout) ended in the SDK's "Request 'initialize' timed out", not the harness's line.
        read_timeout_seconds=max(
            profile.call_timeout + (profile.answer_deadline or 0.0), profile.start_timeout
        )
        + 5,
        cache=None,
    )
    started = False
    # A cancel scope that outlives the handshake (its deadline lifted once
    # connected): the client's task groups must nest inside it. A process is
    # killed at the deadline by a timer instead (cancelling the handshake alone
    # leaves the SDK waiting for it to exit): then the scope is a backstop.
    deadline = profile.start_timeout + (_BACKSTOP if target is not None else 0.0)
    with anyio.CancelScope(deadline=anyio.current_time() + deadline) as scope:
        async with AsyncExitStack() as stack:
            if http is not None:
                await stack.enter_async_context(http)
            if target is not None:
                target.kill_after(profile.start_timeout)
            try:
                await stack.enter_async_context(client)
            except Exception as exc:
                if refusals.count:
                    raise CredentialsRefused(refusals.line) from None
                if isinstance(server, StdoutChecked) and (problem := server.problem()):
                    said = http_headers.scrub_values(problem, secrets)
                    raise TargetError(f"{_describe(profile)}: {said}") from None
                if (
                    target is None
                    and isinstance(endpoint, str)
                    and (problem := nothing_listens(exc, endpoint))
                ):
                    raise TargetError(problem) from None
                if target is not None and not target.fired and "Connection closed" in _one_line(exc):
                    # A process the harness started that ended before its first answer.
                    raise TargetError(
                        f"{_describe(profile)} did not start: it exited{exit_status(stderr_path)} before "
                        f"answering initialize{_tail(stderr_path, secrets, lines=1)}; run the command by "
                        "hand to see why"
                    ) from None
                if target is None or not target.fired:
                    raise TargetError(
                        f"{_describe(profile)} did not start: {_one_line(exc)}{_tail(stderr_path, secrets)}"
                    ) from None
            else:
                started = True
                if isinstance(server, StdoutChecked):
                    server.started = True
                    server.said_once()
                scope.deadline = math.inf
                if target is not None:
                    target.cancel()
                # Calls parked at a question run here; they are cancelled before the client closes.
                back.tasks = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(back.close)
                stack.callback(back.tasks.cancel_scope.cancel)
                connection = Connection(
                    name,
                    client,
                    profile.call_timeout,
                    stderr_path,
                    endpoint,
                    refusals=refusals,
                    secrets=secrets,
                    back=back,
                    answer_deadline=profile.answer_deadline,
                    answer_after=profile.answer_after,
                )
                yield connection
                if target is not None and connection.alive:
                    # The SDK closes stdin and waits 2 s, then SIGTERMs and waits
                    # 2 s more; a target gets EXIT_GRACE, then its tree is killed.
                    target.kill_after(EXIT_GRACE)
                elif target is not None:
                    # It hung or died: no grace for a process known not to answer.
                    await target.kill()
    if not started:
        if isinstance(server, StdoutChecked) and (problem := server.problem()):
            raise TargetError(f"{_describe(profile)}: {http_headers.scrub_values(problem, secrets)}")
        # Over stdio, a server that waits for a Content-Length header (actgate) never answers at all.
        framing = (
            "; nothing came back on stdout (MCP's stdio transport is one JSON-RPC message per line: a server "
            "that waits for a Content-Length header, as a language server does, never answers)"
            if isinstance(server, StdoutChecked)
            else ""
        )
        raise TargetError(
            f"{_describe(profile)} did not answer server/discover within {profile.start_timeout:g}s"
            f"{_tail(stderr_path, secrets)}{framing}; check it starts by hand, or raise the start timeout "
            "(--mcp-start-timeout, or start_timeout in the profile)"
        )


def _hosted(pty: Pty | None, confined: Callable[[list[str]], list[str]]) -> Callable[[list[str]], list[str]]:
    """The command confined, then (`tty: true`) on the terminal's host, which stays beside the harness."""
    if pty is None:
        return confined
    return lambda argv: pty.hosted(confined(argv))


def _terminal(profile: Profile, stack: AsyncExitStack) -> Pty | None:
    """A pseudo-terminal for a `tty: true` target, closed when the connection is; None otherwise."""
    if not profile.tty:
        return None
    pty = Pty()
    stack.callback(pty.close)
    return pty


def _target_env(profile: Profile, root: Path, token: str) -> dict[str, str]:
    # The target inherits the harness's environment (the SDK's launcher would
    # pass on only a safe subset) plus the profile's, plus where its root is.
    # MCP_AUDIT_PROCESS marks it and every descendant, so none outlives the run.
    return {
        **os.environ,
        **profile.env.at(str(root)),
        "MCP_AUDIT_ROOT": str(root),
        reaper.MARKER_VARIABLE: token,
    }


def _stdio_params(profile: Profile, root: Path, token: str) -> StdioServerParameters:
    argv = profile.argv(root)
    if shutil.which(argv[0]) is None:
        raise TargetError(
            f"target command {argv[0]!r} was not found on PATH; install it or give its full path"
        )
    env = _target_env(profile, root, token)
    return StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(root))


def _build_in_process(profile: Profile, root: Path, *, ablate: bool = False) -> Any:
    """`factory(root, **factory_args)` from `py:package.module:factory` or `py:path/to/file.py:factory`."""
    spec = profile.command
    module_ref, _, factory_name = spec.removeprefix("py:").rpartition(":")
    if not module_ref or not factory_name:
        raise UsageError(
            f"in-process target {spec!r} must look like py:package.module:factory or py:file.py:factory"
        )
    module = _import_target(spec, module_ref)
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise UsageError(f"in-process target {spec!r}: {module_ref} has no callable {factory_name!r}")
    try:
        server = factory(root, **profile.factory_args)
    except Exception as exc:
        raise TargetError(f"in-process target {spec!r}: the factory failed: {_one_line(exc)}") from None
    if ablate:
        remove_boundary(server)
    return server


def remove_boundary(server: Any) -> int:
    """Take every `RequestStateBoundary` out of an in-process server's middleware; how many went."""
    middleware = getattr(server, "middleware", None)
    if not isinstance(middleware, list):
        raise TargetError(f"cannot ablate {type(server).__name__}: it has no middleware list")
    kept = [m for m in middleware if not isinstance(m, RequestStateBoundary)]
    removed = len(middleware) - len(kept)
    middleware[:] = kept
    return removed


def _import_target(spec: str, module_ref: str) -> Any:
    if not module_ref.endswith(".py"):
        try:
            return importlib.import_module(module_ref)
        except ImportError as exc:
            raise UsageError(f"in-process target {spec!r}: cannot import {module_ref!r} ({exc})") from None
    path = Path(module_ref).resolve()
    if not path.is_file():
        raise UsageError(f"in-process target {spec!r}: {module_ref} is not a file")
    # Imported once per file under a name of its own, the way pytest imports a
    # conftest: a script's directory-local imports then work as they do when run.
    name = f"mcp_audit_target_{path.stem}_{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise UsageError(f"in-process target {spec!r}: cannot load {module_ref}")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        failed = _one_line(exc)
        raise UsageError(f"in-process target {spec!r}: importing {module_ref} failed: {failed}") from None
    return module


def _describe(profile: Profile) -> str:
    return f"target {profile.command!r}"


def _tail(path: Path | None, secrets: Iterable[str] = (), lines: int = 3) -> str:
    tail = stderr_tail(path, lines, secrets=secrets)
    return f" (stderr{' ends' if lines == 1 else ''}: {tail})" if tail else ""


def _one_line(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
