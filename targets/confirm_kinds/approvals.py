"""The pending server's approval route: the person's channel over HTTP, beside the MCP endpoint.

    POST /approvals/{pending_id}    {"decision": "approved" | "declined"}

It is no tool: nothing the agent's MCP connection can call reaches it. With an
approver token (`--approver-token-env NAME`) every request must also carry
`Authorization: Bearer TOKEN`, a credential the agent's connection is not given.
The decision goes where the pending store reads it (gates.PendingStore.decide).
"""

from __future__ import annotations

import hmac

import gates
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

__all__ = ["ROUTE", "add_agent_approve_tool", "add_route"]

ROUTE = "/approvals/{pending_id}"


def add_agent_approve_tool(server: MCPServer, store: gates.PendingStore) -> None:
    """FLAW agent-approval: an `approve` tool, so the agent's own connection approves what it staged."""

    def approve(pending_id: str) -> str:
        if pending_id not in store.staged:
            raise ToolError("no such pending action")
        store.approve_as_agent(pending_id)
        return f"approved {pending_id}"

    server.add_tool(approve, name="approve", annotations=ToolAnnotations(read_only_hint=False))


def add_route(server: MCPServer, store: gates.PendingStore, approver_token: str | None = None) -> None:
    @server.custom_route(ROUTE, methods=["POST"])
    async def decide(request: Request) -> Response:
        if approver_token is not None:
            given = request.headers.get("authorization", "").encode()
            if not hmac.compare_digest(given, f"Bearer {approver_token}".encode()):
                return _answer(401, error="the approver's token is missing or wrong")
        try:
            body = await request.json()
        except ValueError:
            return _answer(400, error='the body must be JSON: {"decision": "approved"} or "declined"')
        decision = body.get("decision") if isinstance(body, dict) else None
        if decision not in ("approved", "declined"):
            return _answer(400, error='"decision" must be "approved" or "declined"')
        pending_id = request.path_params["pending_id"]
        if pending_id not in store.staged:
            return _answer(404, error="no such pending action")
        try:
            store.decide(pending_id, decision)
        except gates.Refused as exc:
            return _answer(409, error=str(exc))
        return _answer(200, pending_id=pending_id, decision=decision)


def _answer(status: int, **fields: str) -> Response:
    return JSONResponse(fields, status_code=status)
