"""Why a target did not start, said in one line that points at the fix.

Three failures the SDK reports badly on its own: a stdio server that prints to
stdout (the SDK logs a traceback per line and the handshake then waits out the
start timeout), a URL where nothing listens (a bare `ConnectError`), and a
server that exits at once (its status stays inside the SDK: a confined target's
init writes it on stderr, read back here). A server that frames stdio as a
language server does (`Content-Length:` headers) is told so: MCP's stdio
transport is one JSON-RPC message per line, and no timeout makes the two meet.
"""

from __future__ import annotations

import logging
import re
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import httpx2

from .confine_main import EXITED

# The SDK's own record of a stdout line it could not parse: a traceback each. The transport hands
# the same error to the session as a value, where `StdoutChecked` reads it.
_SDK_STDIO_LOGGER = "mcp.client.stdio"
_PARSE_FAILED = "Failed to parse JSONRPC message from server"
_log = logging.getLogger(__name__)
# A line as `escaped` keeps it: an LSP-style header (`Content-Length: 52`), the framing MCP's stdio does not use.
_LSP_HEADER = re.compile(r"^'content-length\s*:", re.IGNORECASE)


class _QuietParseFailures(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != _PARSE_FAILED


logging.getLogger(_SDK_STDIO_LOGGER).addFilter(_QuietParseFailures())


def escaped(text: str, limit: int = 80) -> str:
    """The first characters of a line a target wrote, every control character escaped."""
    return "'" + text[:limit].encode("unicode_escape").decode("ascii").replace("'", "\\'") + "'"


def _line_of(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            given = errors()[0].get("input")
        except (IndexError, AttributeError, TypeError):
            given = None
        if isinstance(given, str | bytes):
            return given if isinstance(given, str) else given.decode("utf-8", "replace")
    return str(exc)


class _CheckedRead:
    """The transport's read stream, noting each line of stdout that is not JSON-RPC."""

    def __init__(self, stream: Any, owner: StdoutChecked) -> None:
        self._stream = stream
        self._owner = owner

    @property
    def last_context(self) -> Any:
        return getattr(self._stream, "last_context", None)

    async def receive(self) -> Any:
        item = await self._stream.receive()
        if isinstance(item, Exception):
            # Passed on as the SDK would (the session drops it); kept, to be the reason if the
            # handshake then fails, or said in one line once it has worked.
            line = escaped(_line_of(item))
            if not self._owner.started:
                self._owner.noise.append(line)
            else:
                _log.warning(
                    "the server wrote non-JSON-RPC to stdout: %s; servers on stdio must log to stderr", line
                )
        return item

    async def aclose(self) -> None:
        await self._stream.aclose()

    def __aiter__(self) -> _CheckedRead:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _CheckedRead:
        await self._stream.__aenter__()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        result: bool | None = await self._stream.__aexit__(kind, exc, tb)
        return result


class StdoutChecked:
    """A stdio transport that keeps the lines of stdout before the handshake that are not JSON-RPC.

    A server that prints a banner and then speaks MCP is still audited; one whose handshake fails
    after printing is told why in one line, not with the SDK's traceback for each line.
    """

    def __init__(self, transport: AbstractAsyncContextManager[Any]) -> None:
        self._transport = transport
        self.noise: list[str] = []
        self.started = False

    async def __aenter__(self) -> tuple[Any, Any]:
        read, write = await self._transport.__aenter__()
        return _CheckedRead(read, self), write

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self._transport.__aexit__(kind, exc, tb)

    def said_once(self) -> None:
        """The lines a server printed before a handshake that worked: one warning, not a traceback each."""
        if self.noise:
            _log.warning("%s", self.problem())

    def problem(self) -> str | None:
        if not self.noise:
            return None
        header = next((line for line in self.noise if _LSP_HEADER.match(line)), None)
        if header is not None:
            return (
                f"the server wrote {header} to stdout, a Content-Length header as a language server frames "
                "its messages, but MCP's stdio transport is one JSON-RPC message per line with no headers: "
                "make it write each message as one line of JSON (or serve it over HTTP and give its url)"
            )
        return (
            f"the server wrote non-JSON-RPC to stdout: {self.noise[0]}; servers on stdio must log to stderr"
        )


def nothing_listens(exc: BaseException, url: str) -> str | None:
    """The one line for a URL target whose connection was refused: nothing is serving there."""
    seen: list[BaseException] = [exc]
    while seen:
        current = seen.pop()
        if isinstance(current, httpx2.ConnectError):
            return (
                f"nothing listens at {url}: start the server first, or give the command that starts it "
                "(with {port} where it takes its port)"
            )
        if isinstance(current, BaseExceptionGroup):
            seen.extend(current.exceptions)
        if current.__cause__ is not None:
            seen.append(current.__cause__)
        if current.__context__ is not None and not current.__suppress_context__:
            seen.append(current.__context__)
    return None


def exit_status(stderr: Path | None) -> str:
    """' with status N' for a target whose init said how it ended on stderr, else nothing.

    A target started unconfined has no init: the SDK that reaped it keeps its status, unsaid.
    """
    if stderr is None or not stderr.exists():
        return ""
    said = [line for line in stderr.read_text(errors="replace").splitlines() if line.startswith(EXITED)]
    return f" with status {said[-1].removeprefix(EXITED).strip()}" if said else ""
