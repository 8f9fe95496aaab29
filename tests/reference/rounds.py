"""The two rounds of a confirmation, by hand through the real SDK client."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import mcp
from mcp import types

from mcp_confirm_audit.target.race import ANNOUNCED

YES = {"confirm": True}


async def _shows_forms(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    # Questions arrive as input_required results here; anything else is declined.
    return types.ElicitResult(action="decline")


def asking_client(server: Any, **options: Any) -> mcp.Client:
    """A client that declares elicitation, as one that shows its user the questions does.

    The careful server answers a client that declares none with -32021 (MRTR's MUST NOT).
    """
    return mcp.Client(server, elicitation_callback=_shows_forms, **options)


async def ask(c: mcp.Client, args: dict[str, Any], tool: str = "delete_file") -> types.InputRequiredResult:
    r1 = await c.session.call_tool(tool, args, allow_input_required=True)
    assert isinstance(r1, types.InputRequiredResult), r1
    return r1


async def redeem(
    c: mcp.Client,
    args: dict[str, Any],
    state: str | None,
    content: Mapping[str, Any] | None = YES,
    *,
    action: str = "accept",
    tool: str = "delete_file",
    key: str = "confirm",
    race: int = 1,
) -> types.CallToolResult | types.InputRequiredResult:
    """`race`: how many redemptions are sent at once, announced as the harness does (target/race.py)."""
    answer = types.ElicitResult(action=action, content=dict(content) if content is not None else None)  # type: ignore[arg-type]
    meta: Any = {ANNOUNCED: {"width": race}} if race > 1 else None
    return await c.session.call_tool(
        tool, args, allow_input_required=True, input_responses={key: answer}, request_state=state, meta=meta
    )


async def decline(
    c: mcp.Client,
    args: dict[str, Any],
    state: str | None,
    *,
    tool: str = "delete_file",
    key: str = "confirm",
    action: str = "decline",
) -> types.CallToolResult | types.InputRequiredResult:
    return await redeem(c, args, state, content=None, action=action, tool=tool, key=key)


async def ask_and_accept(c: mcp.Client, args: dict[str, Any]) -> bool:
    """Round 1 and, if the server asked instead of refusing, an accepting round 2."""
    r1 = await c.session.call_tool("delete_file", args, allow_input_required=True)
    if isinstance(r1, types.InputRequiredResult):
        await redeem(c, args, r1.request_state)
        return True
    assert r1.is_error
    return False


def text(result: object) -> str:
    """The first text block of a tools/call result."""
    assert isinstance(result, types.CallToolResult), result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def import_by_path(name: str, path: Path) -> ModuleType:
    """A reference server's module, imported by file path (it is not an installed package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
