"""Smoke tests of the reference server, through the real SDK client only.

One check per option and per flaw, each flaw shown both ways (careful refuses, flawed
does not). The harness's own detection matrix proves the flaws thoroughly.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import mcp
import pytest
from deadline import deadline
from mcp import StdioServerParameters, types
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from rounds import YES, ask, ask_and_accept, asking_client, decline, redeem, text

pytestmark = pytest.mark.anyio
BOTH = pytest.mark.parametrize("flawed", [False, True], ids=["careful", "flawed"])
KEY = "11" * 32


def question(r1: types.InputRequiredResult) -> types.ElicitRequestFormParams:
    assert r1.input_requests is not None
    params = r1.input_requests["confirm"].params
    assert isinstance(params, types.ElicitRequestFormParams)
    return params


def flaws(flawed: bool, name: str) -> tuple[str, ...]:
    return (name,) if flawed else ()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    until = time.monotonic() + timeout
    while time.monotonic() < until:
        assert proc.poll() is None, f"process exited with {proc.returncode}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port}")


# --- the careful server ---------------------------------------------------------------


async def test_careful_flow_deletes_once(reference: ModuleType, root: Path) -> None:
    async with asking_client(reference.build_server(root)) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert tools["delete_file"].annotations.destructive_hint is True  # type: ignore[union-attr]
        assert tools["delete_file"].annotations.read_only_hint is False  # type: ignore[union-attr]
        assert tools["stat_file"].annotations.read_only_hint is True  # type: ignore[union-attr]
        assert text(await c.session.call_tool("stat_file", {"path": "a.txt"})) == "5"
        r1 = await ask(c, {"path": "a.txt"})
        assert '"a.txt"' in question(r1).message
        assert question(r1).requested_schema["required"] == ["confirm"]
        assert r1.request_state is not None
        assert r1.request_state.startswith("v1.")
        assert text(await redeem(c, {"path": "a.txt"}, r1.request_state)).startswith("Deleted")
        assert not (root / "a.txt").exists()
        (root / "a.txt").write_text("again")  # a second deletion would now be visible
        replay = await redeem(c, {"path": "a.txt"}, r1.request_state)
        assert isinstance(replay, types.CallToolResult)
        assert replay.is_error
        assert "already used or unknown" in text(replay)
        assert (root / "a.txt").exists()


REFUSED_BEFORE_ASKING = {
    "empty": "",
    "nul": "a\x00b",
    "overlong": "x" * 5000,
    "the-root": ".",
    "directory": "sub",
    "dot-dot": "../outside.txt",
    "absolute-outside": "OUTSIDE",
    "link-last": "link",
    "link-parent": "linkdir/b.txt",
    "fifo": "fifo",
    "sibling-prefix": "../root-evil/f.txt",
    "missing": "missing.txt",
}


@pytest.mark.parametrize("path", REFUSED_BEFORE_ASKING.values(), ids=REFUSED_BEFORE_ASKING.keys())
async def test_careful_refuses_before_asking(reference: ModuleType, root: Path, path: str) -> None:
    (root / "link").symlink_to(root / "a.txt")
    (root / "linkdir").symlink_to(root / "sub")
    os.mkfifo(root / "fifo")
    path = str(root.parent / "outside.txt") if path == "OUTSIDE" else path
    async with asking_client(reference.build_server(root)) as c:
        r1 = await c.session.call_tool("delete_file", {"path": path}, allow_input_required=True)
    assert isinstance(r1, types.CallToolResult), r1
    assert r1.is_error
    assert (root / "a.txt").exists()
    assert (root / "sub" / "b.txt").exists()
    assert (root.parent / "outside.txt").exists()
    assert (root.parent / "root-evil" / "f.txt").exists()


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_careful_decline_deletes_nothing(reference: ModuleType, root: Path, action: str) -> None:
    async with asking_client(reference.build_server(root)) as c:
        r1 = await ask(c, {"path": "a.txt"})
        result = await redeem(c, {"path": "a.txt"}, r1.request_state, content=None, action=action)
    assert isinstance(result, types.CallToolResult)
    assert not result.is_error
    assert "Nothing was deleted" in text(result)
    assert (root / "a.txt").exists()


async def test_careful_answer_false_deletes_nothing(reference: ModuleType, root: Path) -> None:
    async with asking_client(reference.build_server(root)) as c:
        r1 = await ask(c, {"path": "a.txt"})
        assert "Nothing was deleted" in text(
            await redeem(c, {"path": "a.txt"}, r1.request_state, {"confirm": False})
        )
    assert (root / "a.txt").exists()


@pytest.mark.parametrize(
    "content", [{"confirm": "false"}, {"confirm": 1}, {"confirm": "yes"}, {}, {"confirm": True, "extra": 1}]
)
async def test_careful_rejects_loose_answers(
    reference: ModuleType, root: Path, content: dict[str, Any]
) -> None:
    async with asking_client(reference.build_server(root)) as c:
        r1 = await ask(c, {"path": "a.txt"})
        result = await redeem(c, {"path": "a.txt"}, r1.request_state, content)
    assert isinstance(result, types.CallToolResult)
    assert result.is_error
    assert (root / "a.txt").exists()


async def test_careful_sdk_rejects_tampered_and_cross_target_state(reference: ModuleType, root: Path) -> None:
    async with asking_client(reference.build_server(root)) as c:
        r1 = await ask(c, {"path": "a.txt"})
        assert r1.request_state is not None
        for args, state in [
            ({"path": "a.txt"}, r1.request_state + "x"),
            ({"path": "sub/b.txt"}, r1.request_state),
        ]:
            with pytest.raises(MCPError) as err:
                await redeem(c, args, state)
            assert err.value.error.code == -32602
    assert (root / "a.txt").exists()
    assert (root / "sub" / "b.txt").exists()


# --- options ----------------------------------------------------------------------------


async def test_option_tool_name_and_path_arg(reference: ModuleType, root: Path) -> None:
    server = reference.build_server(root, tool_name="remove_document", path_arg="target")
    async with asking_client(server) as c:
        tool = next(t for t in (await c.list_tools()).tools if t.name == "remove_document")
        assert list(tool.input_schema["properties"]) == ["target"]
        r1 = await ask(c, {"target": "a.txt"}, tool="remove_document")
        assert text(
            await redeem(c, {"target": "a.txt"}, r1.request_state, tool="remove_document")
        ).startswith("Del")
    assert not (root / "a.txt").exists()


@pytest.mark.parametrize(
    ("mode", "relative_ok", "absolute_ok"),
    [("relative", True, False), ("absolute", False, True), ("both", True, True)],
)
async def test_option_paths(
    reference: ModuleType, root: Path, mode: str, relative_ok: bool, absolute_ok: bool
) -> None:
    async with asking_client(reference.build_server(root, paths_mode=mode)) as c:
        for path, ok in [("a.txt", relative_ok), (str(root / "a.txt"), absolute_ok)]:
            r1 = await c.session.call_tool("delete_file", {"path": path}, allow_input_required=True)
            assert isinstance(r1, types.InputRequiredResult) == ok, (path, r1)


@pytest.mark.parametrize(
    ("form", "good", "bad"),
    [
        ("name", {"confirm_name": "b.txt"}, {"confirm_name": "B.txt"}),
        ("enum", {"choice": "delete"}, {"choice": "Delete"}),
    ],
)
async def test_option_form(
    reference: ModuleType, root: Path, form: str, good: dict[str, Any], bad: dict[str, Any]
) -> None:
    async with asking_client(reference.build_server(root, form=form)) as c:
        r1 = await ask(c, {"path": "sub/b.txt"})
        assert list(question(r1).requested_schema["required"]) == list(good)
        bad_result = await redeem(c, {"path": "sub/b.txt"}, r1.request_state, bad)
        assert isinstance(bad_result, types.CallToolResult)
        assert bad_result.is_error
        r1 = await ask(c, {"path": "sub/b.txt"})
        assert text(await redeem(c, {"path": "sub/b.txt"}, r1.request_state, good)).startswith("Deleted")
    if form == "enum":
        (root / "sub" / "b.txt").write_text("bee")
        async with asking_client(reference.build_server(root, form=form)) as c:
            r1 = await ask(c, {"path": "sub/b.txt"})
            kept = await redeem(c, {"path": "sub/b.txt"}, r1.request_state, {"choice": "keep"})
            assert "Nothing was deleted" in text(kept)
            assert (root / "sub" / "b.txt").exists()


async def test_option_ttl_expires_seal_and_ledger(reference: ModuleType, root: Path) -> None:
    plain_server = reference.build_server(
        root, ttl_seconds=0.3, flaws=["plain-state"]
    )  # only the ledger's TTL
    async with (
        asking_client(reference.build_server(root, ttl_seconds=0.3)) as sealed,
        asking_client(plain_server) as plain,
    ):
        r_sealed, r_plain = await ask(sealed, {"path": "a.txt"}), await ask(plain, {"path": "a.txt"})
        await anyio.sleep(0.4)
        with pytest.raises(MCPError):
            await redeem(sealed, {"path": "a.txt"}, r_sealed.request_state)
        assert "already used or unknown" in text(
            await redeem(plain, {"path": "a.txt"}, r_plain.request_state)
        )
    assert (root / "a.txt").exists()


@pytest.mark.slow  # a real target process (tests/README.md)
async def test_option_shared_key_sqlite_ledger_over_stdio(
    server_py: Path, root: Path, tmp_path: Path
) -> None:
    """Two replica processes: round 2 may land on the other one, a replay on either fails."""
    env = {**os.environ, "REF_KEY": KEY}
    ledger = f"sqlite:{tmp_path / 'l.db'}"
    args = [str(server_py), "--root", str(root), "--shared-key-env", "REF_KEY", "--ledger", ledger]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    async with asking_client(params) as a, asking_client(params) as b:
        r1 = await ask(a, {"path": "a.txt"})
        assert text(await redeem(b, {"path": "a.txt"}, r1.request_state)).startswith("Deleted")
        (root / "a.txt").write_text("again")
        assert "already used" in text(await redeem(a, {"path": "a.txt"}, r1.request_state))
    assert (root / "a.txt").exists()


async def test_option_redis_ledger(reference: ModuleType, root: Path, redis_url: str) -> None:
    def replica() -> MCPServer:
        server: MCPServer = reference.build_server(root, shared_key=bytes.fromhex(KEY), ledger=redis_url)
        return server

    async with asking_client(replica()) as a, asking_client(replica()) as b:
        r1 = await ask(a, {"path": "a.txt"})
        assert text(await redeem(b, {"path": "a.txt"}, r1.request_state)).startswith("Deleted")
        (root / "a.txt").write_text("again")
        assert "already used" in text(await redeem(a, {"path": "a.txt"}, r1.request_state))
    assert (root / "a.txt").exists()


@pytest.mark.slow  # a real target process (tests/README.md)
async def test_option_http_transport(server_py: Path, root: Path) -> None:
    port = free_port()
    cmd = [sys.executable, str(server_py), "--root", str(root), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        async with asking_client(f"http://127.0.0.1:{port}/mcp") as c:
            r1 = await ask(c, {"path": "a.txt"})
            assert text(await redeem(c, {"path": "a.txt"}, r1.request_state)).startswith("Deleted")
    finally:
        proc.terminate()
        stdout, _ = proc.communicate(timeout=deadline(10))
    assert not (root / "a.txt").exists()
    assert stdout == b""


def test_shared_key_accepts_hex_and_base64(reference: ModuleType) -> None:
    key = bytes(range(32))
    for spelling in [
        key.hex(),
        base64.b64encode(key).decode(),
        base64.urlsafe_b64encode(key).decode().rstrip("="),
    ]:
        assert reference.decode_key(spelling) == key
    for bad in ["", "11" * 31, base64.b64encode(b"k" * 31).decode(), "not a key"]:
        with pytest.raises(ValueError, match="32 bytes"):
            reference.decode_key(bad)


@pytest.mark.slow  # a real target process (tests/README.md)
def test_unknown_flaw_is_a_usage_error(server_py: Path, root: Path) -> None:
    cmd = [sys.executable, str(server_py), "--root", str(root), "--flaw", "bogus"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=deadline(30), check=False)
    assert done.returncode == 2
    assert "no-ledger" in done.stderr
    assert "check-then-delete-ledger" in done.stderr


# --- flaws, each both ways ------------------------------------------------------------------


async def burn_then_replay(first: mcp.Client, second: mcp.Client, args: dict[str, Any]) -> None:
    """Spend a confirmation with no effect (decline), then replay it as an accept.

    After a real deletion a re-created file has a new inode and the identity check
    refuses it anyway (unless it is put back by a hard link). A declined first round
    leaves the file as the user was asked about it, so only the ledger stands in the way.
    """
    r1 = await ask(first, args)
    declined = await decline(first, args, r1.request_state)
    assert "Nothing was deleted" in text(declined)
    await redeem(second, args, r1.request_state)


@BOTH
async def test_flaw_no_ledger(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, "no-ledger"))) as c:
        await burn_then_replay(c, c, {"path": "a.txt"})
    assert (root / "a.txt").exists() != flawed


@BOTH
async def test_flaw_stateless_answers(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, "stateless-answers"))) as c:
        result = await redeem(c, {"path": "a.txt"}, None)
    assert isinstance(result, types.InputRequiredResult) != flawed  # careful asks again
    assert (root / "a.txt").exists() != flawed


async def test_flaw_plain_state(reference: ModuleType, root: Path) -> None:
    (root / "canary.txt").write_text("canary")
    async with asking_client(reference.build_server(root, flaws=["plain-state"])) as c:
        r1 = await ask(c, {"path": "a.txt"})
        assert r1.request_state is not None
        state = json.loads(r1.request_state)  # readable
        assert state["path"] == str(root.resolve() / "a.txt")
        garbage = await redeem(c, {"path": "a.txt"}, "garbage")  # reaches the handler: no -32602
        assert "malformed confirmation state" in text(garbage)
        cross = await redeem(c, {"path": "sub/b.txt"}, r1.request_state)  # unedited, other target
        assert "different file" in text(cross)
        r1b = await ask(c, {"path": "a.txt"})  # a fresh nonce: the cross-target try spent the first
        edited = json.dumps(
            {**json.loads(r1b.request_state or ""), "path": str(root.resolve() / "canary.txt")}
        )
        assert text(await redeem(c, {"path": "canary.txt"}, edited)).startswith("Deleted")
        assert "already used" in text(await redeem(c, {"path": "canary.txt"}, edited))
    assert not (root / "canary.txt").exists()
    assert (root / "a.txt").exists()
    assert (root / "sub" / "b.txt").exists()


@BOTH
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_flaw_decline_as_accept(reference: ModuleType, root: Path, flawed: bool, action: str) -> None:
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, "decline-as-accept"))) as c:
        r1 = await ask(c, {"path": "a.txt"})
        await redeem(c, {"path": "a.txt"}, r1.request_state, content=None, action=action)
    assert (root / "a.txt").exists() != flawed


@BOTH
async def test_flaw_truthy_strings(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, "truthy-strings"))) as c:
        r1 = await ask(c, {"path": "a.txt"})
        await redeem(c, {"path": "a.txt"}, r1.request_state, {"confirm": "false"})
    assert (root / "a.txt").exists() != flawed


@BOTH
async def test_flaw_prefix_containment(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, "prefix-containment"))) as c:
        assert await ask_and_accept(c, {"path": "../root-evil/f.txt"}) == flawed
    assert (root.parent / "root-evil" / "f.txt").exists() != flawed


@BOTH
async def test_flaw_ask_before_check(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, "ask-before-check"))) as c:
        r1 = await c.session.call_tool("delete_file", {"path": "../outside.txt"}, allow_input_required=True)
        assert isinstance(r1, types.InputRequiredResult) == flawed
        if isinstance(r1, types.InputRequiredResult):
            r2 = await redeem(c, {"path": "../outside.txt"}, r1.request_state)
            assert isinstance(r2, types.CallToolResult)
            assert r2.is_error  # refused, but only after the user was asked
    assert (root.parent / "outside.txt").exists()


@BOTH
@pytest.mark.parametrize(
    ("flaw", "link", "points_to", "arg"),
    [
        ("link-after-resolve", "link.txt", "canary.txt", "link.txt"),
        ("link-last-component-only", "linkdir", "sub", "linkdir/canary.txt"),
    ],
)
async def test_flaw_links(
    reference: ModuleType, root: Path, flawed: bool, flaw: str, link: str, points_to: str, arg: str
) -> None:
    canary = root / (points_to if points_to.endswith(".txt") else f"{points_to}/canary.txt")
    canary.write_text("canary")
    (root / link).symlink_to(root / points_to)
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, flaw))) as c:
        assert await ask_and_accept(c, {"path": arg}) == flawed
    assert canary.exists() != flawed
    assert (root / link).is_symlink()


@BOTH
async def test_flaw_no_identity_check(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, "no-identity-check"))) as c:
        r1 = await ask(c, {"path": "a.txt"})
        (root / "a.txt").unlink()
        (root / "a.txt").write_text("a different, important file")
        r2 = await redeem(c, {"path": "a.txt"}, r1.request_state)
        assert flawed or "changed while waiting" in text(r2)
    assert (root / "a.txt").exists() != flawed


@BOTH
async def test_flaw_sanitiser_keeps_bidi(reference: ModuleType, root: Path, flawed: bool) -> None:
    name = "x\u202etxt.exe\u200b\n\x1b[2Jy.txt"
    (root / name).write_text("x")
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, "sanitiser-keeps-bidi"))) as c:
        message = question(await ask(c, {"path": name})).message
    assert "\n" not in message
    assert "\x1b" not in message
    assert ("\u202e" in message) == flawed
    assert ("\u200b" in message) == flawed
    if not flawed:
        assert "\\u202e" in message
        assert "\\u200b" in message
        assert "\\n" in message


@BOTH
async def test_flaw_sanitiser_truncates_end(reference: ModuleType, root: Path, flawed: bool) -> None:
    name = "a" * 200 + "-REAL-NAME.txt"
    (root / name).write_text("x")
    async with asking_client(
        reference.build_server(root, flaws=flaws(flawed, "sanitiser-truncates-end"))
    ) as c:
        message = question(await ask(c, {"path": name})).message
    assert len(message) < 300
    assert "…" in message
    assert ("REAL-NAME.txt" in message) != flawed


@BOTH
async def test_flaw_asks_for_secret(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(reference.build_server(root, flaws=flaws(flawed, "asks-for-secret"))) as c:
        schema = question(await ask(c, {"path": "a.txt"})).requested_schema
    assert ("api_key" in schema["properties"]) == flawed


@BOTH
async def test_flaw_per_process_ledger(
    reference: ModuleType, root: Path, tmp_path: Path, flawed: bool
) -> None:
    def replica() -> MCPServer:
        options = {"shared_key": bytes.fromhex(KEY), "ledger": f"sqlite:{tmp_path / 'l.db'}"}
        server: MCPServer = reference.build_server(root, flaws=flaws(flawed, "per-process-ledger"), **options)
        return server

    async with asking_client(replica()) as a, asking_client(replica()) as b:
        await burn_then_replay(a, b, {"path": "a.txt"})  # the replay lands on the other replica
    assert (root / "a.txt").exists() != flawed


@BOTH
async def test_flaw_check_then_delete_ledger(reference: ModuleType, root: Path, flawed: bool) -> None:
    """A decline and two accepts of one confirmation, racing: at most one may get past the ledger."""
    async with asking_client(
        reference.build_server(root, flaws=flaws(flawed, "check-then-delete-ledger"))
    ) as c:
        r1 = await ask(c, {"path": "a.txt"})
        texts: list[str] = []

        async def answer(action: str, content: dict[str, Any] | None) -> None:
            sent = await redeem(c, {"path": "a.txt"}, r1.request_state, content, action=action, race=3)
            texts.append(text(sent))

        # The flawed ledger holds its check-to-delete gap open until the three announced have passed
        # its check (targets/reference/race_gate.py): no pause decides who is inside it.
        async with anyio.create_task_group() as tg:
            tg.start_soon(answer, "decline", None)
            tg.start_soon(answer, "accept", YES)
            tg.start_soon(answer, "accept", YES)
    assert any("already used" in t for t in texts) != flawed, texts
