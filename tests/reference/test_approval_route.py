"""The pending server's approval route: the person's decision over HTTP, which no MCP call can give.

The server in-process through the real SDK client (the agent), its route
through its own Starlette app (the person's browser or CLI).
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2
import mcp
import pytest
from rounds import import_by_path, text

pytestmark = pytest.mark.anyio
SERVER_PY = Path(__file__).resolve().parents[2] / "targets" / "confirm_kinds" / "server.py"
TOKEN = "approver-token-for-the-route"
SIGNED = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def kinds() -> ModuleType:
    return import_by_path("mcp_confirm_kinds_server", SERVER_PY)


async def _stage(agent: mcp.Client, path: str) -> str:
    staged = await agent.call_tool("delete_file", {"path": path})
    said: dict[str, Any] = json.loads(text(staged))
    assert said["status"] == "pending_approval"
    return str(said["pending_id"])


async def test_only_the_route_approves_and_each_decision_is_taken_once(kinds: ModuleType, root: Path) -> None:
    server = kinds.build_server(root, mechanism="pending", approver_token=TOKEN)
    route = httpx2.ASGITransport(app=server.streamable_http_app(host="127.0.0.1"))
    async with (
        mcp.Client(server) as agent,
        httpx2.AsyncClient(transport=route, base_url="http://127.0.0.1") as person,
    ):
        # The agent's tools: none approves.
        assert "approve" not in {t.name for t in (await agent.list_tools()).tools}
        pending_id = await _stage(agent, "a.txt")
        waiting = await agent.call_tool("execute_pending", {"pending_id": pending_id})
        assert waiting.is_error
        assert "awaiting the human's approval" in text(waiting)
        approve = {"decision": "approved"}
        assert (await person.post(f"/approvals/{pending_id}", json=approve)).status_code == 401
        bad = await person.post(f"/approvals/{pending_id}", json={"decision": "yes"}, headers=SIGNED)
        assert bad.status_code == 400
        assert (await person.post("/approvals/feedfacecafe", json=approve, headers=SIGNED)).status_code == 404
        assert (
            await person.post(f"/approvals/{pending_id}", json=approve, headers=SIGNED)
        ).status_code == 200
        again = await person.post(f"/approvals/{pending_id}", json={"decision": "declined"}, headers=SIGNED)
        assert again.status_code == 409
        done = await agent.call_tool("execute_pending", {"pending_id": pending_id})
        assert not done.is_error, text(done)
        assert not (root / "a.txt").exists()


async def test_a_declined_action_is_never_executed(kinds: ModuleType, root: Path) -> None:
    server = kinds.build_server(root, mechanism="pending")  # no approver token: the route alone
    route = httpx2.ASGITransport(app=server.streamable_http_app(host="127.0.0.1"))
    async with (
        mcp.Client(server) as agent,
        httpx2.AsyncClient(transport=route, base_url="http://127.0.0.1") as person,
    ):
        pending_id = await _stage(agent, "a.txt")
        said = await person.post(f"/approvals/{pending_id}", json={"decision": "declined"})
        assert said.json() == {"pending_id": pending_id, "decision": "declined"}
        refused = await agent.call_tool("execute_pending", {"pending_id": pending_id})
        assert refused.is_error
        assert "the human declined this action" in text(refused)
        assert (root / "a.txt").read_text() == "hello"
