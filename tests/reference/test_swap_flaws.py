"""Smoke tests of the flaws the swap families catch, through the real SDK client only.

The swap happens between the question and the answer, on the real filesystem. Each
flaw both ways, plus what it must still refuse.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

import mcp
import pytest
from mcp import types
from mcp.server.mcpserver import MCPServer
from rounds import asking_client

pytestmark = pytest.mark.anyio
BOTH = pytest.mark.parametrize("flawed", [False, True], ids=["careful", "flawed"])
A = {"path": "a.txt"}


async def ask(c: mcp.Client, args: dict[str, Any]) -> types.InputRequiredResult:
    r1 = await c.session.call_tool("delete_file", args, allow_input_required=True)
    assert isinstance(r1, types.InputRequiredResult), r1
    return r1


async def accept(c: mcp.Client, args: dict[str, Any], state: str | None) -> types.CallToolResult:
    answers = {"confirm": types.ElicitResult(action="accept", content={"confirm": True})}
    r2 = await c.session.call_tool(
        "delete_file", args, allow_input_required=True, input_responses=answers, request_state=state
    )
    assert isinstance(r2, types.CallToolResult), r2
    return r2


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def build(reference: ModuleType, root: Path, flawed: bool, flaw: str) -> MCPServer:
    server: MCPServer = reference.build_server(root, flaws=(flaw,) if flawed else ())
    return server


@BOTH
async def test_flaw_no_recheck_follows_a_link_swapped_in_after_the_question(
    reference: ModuleType, root: Path, flawed: bool
) -> None:
    outside = root.parent / "outside.txt"
    async with asking_client(build(reference, root, flawed, "no-recheck")) as c:
        r1 = await ask(c, A)
        (root / "a.txt").unlink()
        (root / "a.txt").symlink_to(outside)
        r2 = await accept(c, A, r1.request_state)
    assert r2.is_error != flawed, text(r2)
    assert outside.exists() != flawed


@BOTH
async def test_flaw_no_recheck_follows_a_parent_directory_swapped_for_a_link(
    reference: ModuleType, root: Path, flawed: bool
) -> None:
    decoy = root / "decoy"
    decoy.mkdir()
    (decoy / "b.txt").write_text("canary")
    async with asking_client(build(reference, root, flawed, "no-recheck")) as c:
        r1 = await ask(c, {"path": "sub/b.txt"})
        os.rename(root / "sub", root / "sub-aside")
        (root / "sub").symlink_to(decoy)
        await accept(c, {"path": "sub/b.txt"}, r1.request_state)
    assert (decoy / "b.txt").exists() != flawed
    assert (root / "sub-aside" / "b.txt").exists()


async def test_flaw_no_recheck_still_checks_everything_before_asking(
    reference: ModuleType, root: Path
) -> None:
    (root / "link.txt").symlink_to(root / "a.txt")
    async with asking_client(build(reference, root, True, "no-recheck")) as c:
        for path in ("../outside.txt", "link.txt", "sub", "missing.txt"):
            r1 = await c.session.call_tool("delete_file", {"path": path}, allow_input_required=True)
            assert isinstance(r1, types.CallToolResult), (path, r1)
            assert r1.is_error, (path, r1)
        # The approval is still spent once: a second redemption does nothing.
        r1 = await ask(c, A)
        assert not (await accept(c, A, r1.request_state)).is_error
        (root / "a.txt").write_text("back again")
        assert "already used" in text(await accept(c, A, r1.request_state))
    assert (root / "a.txt").exists()


@BOTH
async def test_flaw_missing_is_deleted_reports_a_deletion_it_did_not_do(
    reference: ModuleType, root: Path, flawed: bool
) -> None:
    async with asking_client(build(reference, root, flawed, "missing-is-deleted")) as c:
        r1 = await ask(c, A)
        (root / "a.txt").unlink()
        r2 = await accept(c, A, r1.request_state)
    assert r2.is_error != flawed
    assert ("Deleted" in text(r2)) == flawed


async def test_flaw_missing_is_deleted_still_refuses_a_missing_file_before_asking_and_a_swap(
    reference: ModuleType, root: Path
) -> None:
    async with asking_client(build(reference, root, True, "missing-is-deleted")) as c:
        r1 = await c.session.call_tool("delete_file", {"path": "missing.txt"}, allow_input_required=True)
        assert isinstance(r1, types.CallToolResult)
        assert r1.is_error
        asked = await ask(c, A)
        os.replace(root / "sub" / "b.txt", root / "a.txt")
        assert "changed while waiting" in text(await accept(c, A, asked.request_state))
    assert (root / "a.txt").read_text() == "bee"
