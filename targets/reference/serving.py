"""What every reference server does the same way: its log line, taking out the SDK's seal, serving HTTP."""

from __future__ import annotations

import logging
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateBoundary

__all__ = ["configure_log", "remove_boundary", "serve_http"]


def remove_boundary(server: MCPServer) -> None:
    """Take the SDK's sealing middleware out of the chain (a flaw, or a state of the server's own)."""
    before = len(server.middleware)
    server.middleware[:] = [m for m in server.middleware if not isinstance(m, RequestStateBoundary)]
    if len(server.middleware) != before - 1:
        raise RuntimeError("expected exactly one RequestStateBoundary in the middleware chain")


def configure_log(log: logging.Logger, prefix: str) -> None:
    """One line per security event on stderr (stdout is the protocol), once per logger."""
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(f"{prefix}: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def serve_http(server: MCPServer, port: int, log_level: str = "info") -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp (and the server's custom routes), loopback only.

    Served with uvicorn directly rather than `server.run("streamable-http")` only to
    turn the access log off: uvicorn writes it to stdout, which should stay quiet.
    """
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, access_log=False, log_level=log_level)
