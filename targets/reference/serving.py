"""What every reference server does the same way: its log line, and taking out the SDK's seal."""

from __future__ import annotations

import logging
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateBoundary

__all__ = ["configure_log", "remove_boundary"]


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
