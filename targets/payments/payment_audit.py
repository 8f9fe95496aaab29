"""`--log-into-root`: the careful server's own audit log, one JSON line per tools/call.

Not a flaw: a real server keeps its log in its working directory, which is the root.
It records every call, asked, paid, declined or refused (the SDK boundary's refusals
too: this middleware runs outside it), so the log grows on every control. A harness
must see it as bookkeeping, not as an effect.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types.methods import is_input_required

__all__ = ["LOG_NAME", "AuditLog"]

LOG_NAME = "audit.jsonl"


class AuditLog:
    def __init__(self, root: Path) -> None:
        self.path = root / LOG_NAME

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        params = ctx.params or {}
        entry: dict[str, Any] = {
            "at": round(time.time(), 3),
            "tool": params.get("name"),
            "answered": bool(params.get("inputResponses")),
            "with_state": params.get("requestState") is not None,
        }
        try:
            result = await call_next(ctx)
        except Exception as exc:
            self._write({**entry, "outcome": "rejected", "error": type(exc).__name__})
            raise
        self._write({**entry, "outcome": _outcome(result)})
        return result

    def _write(self, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, ensure_ascii=True) + "\n").encode()
        # O_APPEND: one write per line; O_NOFOLLOW: a link planted at the log's name is not followed.
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def _outcome(result: HandlerResult) -> str:
    if is_input_required(result):
        return "asked"
    failed = result.get("isError") if isinstance(result, dict) else getattr(result, "is_error", None)
    return "error" if failed else "done"
