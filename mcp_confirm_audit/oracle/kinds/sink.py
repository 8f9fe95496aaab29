"""The `sink` effect: every request the harness's loopback HTTP server received.

    effect:
      - sink: true          # the target's webhook / upstream points at {sink}

A target whose confirmed action is a request to somewhere else (a webhook, a
payment provider, a bridge) is given `{sink}` as that somewhere, in its
arguments or its files. The sink answers every method with `200 {"ok": true}`
(or the reply it is told to give) and records each request: method, path,
query, the content type (and that credentials were sent, never their
values), and the body, parsed as JSON when it is JSON. It listens on
127.0.0.1 only, bounds what it keeps, and closes without waiting on a
client that stopped talking.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import threading
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..effects import ProbeEnv, ProbeSpec, probe_kind

MAX_BODY = 1024 * 1024  # bytes of each body kept
MAX_DRAIN = 64 * 1024 * 1024  # bytes of a body read (and dropped) so the client sees a reply
MAX_REQUESTS = 10_000  # requests kept: the latest ones, each numbered, so a new one always shows
READ_TIMEOUT = 5.0  # seconds a client may pause mid-request
# Headers whose values are credentials: recorded as sent, never with their value.
SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie", "x-api-key")

Reply = tuple[int, Any]  # status, and a JSON value (or str/bytes sent as they are)


class Sink:
    """A loopback HTTP server recording every request; a context manager.

    >>> with Sink() as sink:  # doctest: +SKIP
    ...     urllib.request.urlopen(f"{sink.url}/hook", data=b'{"amount": 5}')
    ...     sink.requests()[0]["body"]
    {'amount': 5}
    """

    def __init__(self, reply: Reply = (200, {"ok": True}), *, max_requests: int = MAX_REQUESTS) -> None:
        self._lock = threading.Lock()
        self._requests: deque[dict[str, Any]] = deque(maxlen=max_requests)
        self._received = 0
        self._reply = _checked(reply)
        self._closed = False
        self._server = _Server(self)
        host, port = self._server.server_address[:2]
        self.port: int = port
        self.url = f"http://{host!s}:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="mcp-sink", daemon=True
        )
        self._thread.start()

    def requests(self) -> list[dict[str, Any]]:
        """The requests received so far, oldest first (the latest `max_requests` of them)."""
        with self._lock:
            return [dict(r) for r in self._requests]

    @property
    def received(self) -> int:
        with self._lock:
            return self._received

    def answer_with(self, status: int, body: Any) -> None:
        """Reply to every request from now on with `status` and `body` (a target may check its upstream's answer)."""
        reply = _checked((status, body))
        with self._lock:
            self._reply = reply

    def close(self) -> None:
        """Stop listening, cut every open connection, and wait (boundedly) for every thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._server.shutdown()
        self._server.server_close()
        self._server.cut_connections()
        self._thread.join(READ_TIMEOUT)

    def __enter__(self) -> Sink:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _record(self, request: dict[str, Any]) -> Reply:
        with self._lock:
            self._received += 1
            self._requests.append({"seq": self._received, **request})
            return self._reply


def _checked(reply: Reply) -> Reply:
    status = reply[0]
    if not isinstance(status, int) or not 100 <= status <= 599:
        raise ValueError(f"a sink's reply status must be an HTTP status (100-599), got {status!r}")
    return reply


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # close() joins the threads it knows itself, with a bound

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self._open: dict[threading.Thread, socket.socket] = {}
        self._open_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self._serve_one, args=(request, client_address), name="mcp-sink-request", daemon=True
        )
        with self._open_lock:
            self._open[thread] = request
        thread.start()

    def _serve_one(self, request: Any, client_address: Any) -> None:
        try:
            self.process_request_thread(request, client_address)
        finally:
            with self._open_lock:
                self._open.pop(threading.current_thread(), None)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up or paused too long: nothing for the harness's stderr

    def cut_connections(self) -> None:
        with self._open_lock:
            open_now = dict(self._open)
        for connection in open_now.values():
            with contextlib.suppress(OSError):  # already closed by its handler
                connection.shutdown(socket.SHUT_RDWR)
        for thread in open_now:
            thread.join(READ_TIMEOUT)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = READ_TIMEOUT

    def __getattr__(self, name: str) -> Any:
        # Any method at all: do_GET, do_POST, do_PROPFIND...
        if name.startswith("do_"):
            return self._answer
        raise AttributeError(name)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the sink records requests; it does not write to the harness's stderr

    def _answer(self) -> None:
        raw, truncated = self._body()
        split = urlsplit(self.path)
        headers: dict[str, str] = {}
        if content_type := self.headers.get("content-type"):
            headers["content-type"] = content_type
        for name in SECRET_HEADERS:
            if name in self.headers:
                headers[name] = "<redacted>"
        request: dict[str, Any] = {
            "method": self.command,
            "path": split.path,
            "query": parse_qs(split.query, keep_blank_values=True),
            "headers": headers,
            "body": body_value(raw),
        }
        if truncated:
            request["truncated"] = f"body longer than {MAX_BODY} bytes: only its first bytes are kept"
        status, body = self.server.sink._record(request)
        payload, content_type = _encoded(body)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _body(self) -> tuple[bytes, bool]:
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return self._chunked()
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = 0
        kept = self.rfile.read(min(length, MAX_BODY)) if length > 0 else b""
        rest = length - len(kept)
        if 0 < rest <= MAX_DRAIN - MAX_BODY:
            self._drain(rest)
        elif rest > 0:
            self.close_connection = True
        return kept, length > MAX_BODY

    def _chunked(self) -> tuple[bytes, bool]:
        kept, seen = bytearray(), 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            except ValueError:
                size = 0
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return bytes(kept), seen > MAX_BODY
            if seen + size > MAX_DRAIN:
                self.close_connection = True
                return bytes(kept), True
            left = size
            while left > 0 and (piece := self.rfile.read(min(left, 1 << 16))):
                left -= len(piece)
                kept += piece[: max(0, MAX_BODY - len(kept))]
            self.rfile.readline(1024)
            seen += size

    def _drain(self, left: int) -> None:
        while left > 0 and (chunk := self.rfile.read(min(left, 1 << 16))):
            left -= len(chunk)


def body_value(raw: bytes) -> Any:
    """A body as it is compared: None when empty, JSON when it is JSON, text, or a digest."""
    if not raw:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
    try:
        return json.loads(text)
    except ValueError:
        return text


def _encoded(body: Any) -> tuple[bytes, str]:
    if isinstance(body, bytes):
        return body, "application/octet-stream"
    if isinstance(body, str):
        return body.encode(), "text/plain; charset=utf-8"
    return json.dumps(body).encode(), "application/json"


@dataclass(frozen=True, slots=True)
class SinkProbe:
    """What the harness's sink received; the engine owns the one `Sink` and passes it through `ProbeEnv`."""

    name: str

    async def observe(self, env: ProbeEnv) -> Any:
        return env.sink_requests()


@probe_kind("sink")
def sink_probe(spec: ProbeSpec) -> SinkProbe:
    return SinkProbe(spec.name)
