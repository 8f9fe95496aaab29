"""Smoke tests of the later flaws and options, through the real SDK client only.

Each flaw both ways (the careful server refuses, the flawed one acts, as seen on disk),
plus what each flaw must still refuse: a flaw removes one defence, never two.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import mcp
import pytest
from mcp import types
from mcp.server.mcpserver import MCPServer
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter
from rounds import ask, ask_and_accept, asking_client, decline, redeem, text

pytestmark = pytest.mark.anyio
BOTH = pytest.mark.parametrize("flawed", [False, True], ids=["careful", "flawed"])
A = {"path": "a.txt"}
B = {"path": "sub/b.txt"}


class Raw(types.Request[dict[str, Any] | None, str]):
    """A tools/call with hand-written params, for what the typed API would not send."""


async def raw_call(c: mcp.Client, params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await c.session.send_request(
        Raw(method="tools/call", params=params), TypeAdapter(dict[str, Any])
    )
    return result


def refused(result: object) -> str:
    """The tool's own refusal (a ToolError), not the SDK's."""
    assert isinstance(result, types.CallToolResult), result
    assert result.is_error, result
    return text(result)


def build(reference: ModuleType, root: Path, *flaws: str, **options: Any) -> MCPServer:
    server: MCPServer = reference.build_server(root, flaws=flaws, **options)
    return server


def maybe(flawed: bool, name: str) -> tuple[str, ...]:
    return (name,) if flawed else ()


# --- trusting-state ---------------------------------------------------------------------

FORGERIES = ["x" * 40, "", "v1.AAAA", '{"approved": true, "confirmed": true}', "eyJhcHByb3ZlZCI6IHRydWV9"]


@BOTH
async def test_flaw_trusting_state_takes_any_state_as_proof(
    reference: ModuleType, root: Path, flawed: bool
) -> None:
    async with asking_client(build(reference, root, *maybe(flawed, "trusting-state"))) as c:
        for forged in FORGERIES:
            (root / "a.txt").write_text("hello")
            await ask(c, A)
            if flawed:
                assert text(await redeem(c, A, forged)).startswith("Deleted"), forged
            else:
                with pytest.raises(MCPError) as err:  # the SDK's boundary: -32602
                    await redeem(c, A, forged)
                assert err.value.error.code == -32602
            assert (root / "a.txt").exists() != flawed, forged


async def test_flaw_trusting_state_mutated_and_foreign_states_act(reference: ModuleType, root: Path) -> None:
    async with (
        asking_client(build(reference, root, "trusting-state")) as c,
        asking_client(build(reference, root, "trusting-state")) as other,
    ):
        r1 = await ask(c, A)
        assert r1.request_state is not None
        assert r1.request_state.startswith("v1.")  # shaped like the SDK's, so every mutation applies
        flipped = r1.request_state[:-1] + ("A" if r1.request_state[-1] != "A" else "B")
        assert text(await redeem(c, A, flipped)).startswith("Deleted")
        (root / "a.txt").write_text("hello")
        await ask(c, A)
        theirs = await ask(other, A)  # minted by another process of the same server
        assert text(await redeem(c, A, theirs.request_state)).startswith("Deleted")
    assert not (root / "a.txt").exists()


async def test_flaw_trusting_state_still_refuses_replay_and_other_calls(
    reference: ModuleType, root: Path
) -> None:
    async with asking_client(build(reference, root, "trusting-state", second_tool=True)) as c:
        await ask(c, A)
        assert "Nothing was deleted" in text(await decline(c, A, "anything"))
        assert "no question was asked" in refused(await redeem(c, A, "anything"))  # replay: spent
        await ask(c, A)
        for args, tool in [(B, "delete_file"), ({**A, "force": True}, "delete_file"), (A, "truncate_file")]:
            assert "no question was asked" in refused(await redeem(c, args, "anything", tool=tool))
        assert text(await redeem(c, A, "anything")).startswith("Deleted")  # the real question
    assert (root / "sub" / "b.txt").exists()


async def test_flaw_trusting_state_still_checks_identity(reference: ModuleType, root: Path) -> None:
    async with asking_client(build(reference, root, "trusting-state")) as c:
        await ask(c, A)
        (root / "a.txt").unlink()
        (root / "a.txt").write_text("a different, important file")
        assert "changed while waiting" in refused(await redeem(c, A, "anything"))
    assert (root / "a.txt").exists()


# --- unbound-state and the second tool --------------------------------------------------------


@BOTH
async def test_flaw_unbound_state_serves_any_file_argument_or_tool(
    reference: ModuleType, root: Path, flawed: bool
) -> None:
    """A's approval on the call for B, on truncate_file for A, then on A with `force: true`."""
    server = build(reference, root, *maybe(flawed, "unbound-state"), second_tool=True)
    async with asking_client(server) as c:
        for args, tool, done in [(B, "delete_file", "Deleted"), (A, "truncate_file", "Emptied")]:
            r1 = await ask(c, A)
            if flawed:
                assert text(await redeem(c, args, r1.request_state, tool=tool)).startswith(done)
            else:
                with pytest.raises(MCPError) as err:  # the SDK's boundary: -32602
                    await redeem(c, args, r1.request_state, tool=tool)
                assert err.value.error.code == -32602
        assert (root / "a.txt").read_text() == ("" if flawed else "hello")
        r1 = await ask(c, A)
        if flawed:
            assert text(await redeem(c, {**A, "force": True}, r1.request_state)).startswith("Deleted")
        else:
            with pytest.raises(MCPError):
                await redeem(c, {**A, "force": True}, r1.request_state)
    assert (root / "sub" / "b.txt").exists() != flawed
    assert (root / "a.txt").exists() != flawed


async def test_flaw_unbound_state_truncates_through_the_second_tool(
    reference: ModuleType, root: Path
) -> None:
    async with asking_client(build(reference, root, "unbound-state", second_tool=True)) as c:
        r1 = await ask(c, A)
        state = json.loads(r1.request_state or "")
        assert list(state) == ["nonce"]  # readable, names no file
        assert text(await redeem(c, A, r1.request_state, tool="truncate_file")).startswith("Emptied")
        assert (root / "a.txt").read_text() == ""
        assert "already used" in refused(await redeem(c, A, r1.request_state))  # one ledger for both


async def test_flaw_unbound_state_keeps_ledger_and_identity(reference: ModuleType, root: Path) -> None:
    async with asking_client(build(reference, root, "unbound-state")) as c:
        r1 = await ask(c, A)
        forged = json.dumps({"nonce": "not-one-we-issued"})
        for state in [forged, "garbage", (r1.request_state or "") + "x"]:
            assert refused(await redeem(c, A, state))
        (root / "a.txt").unlink()
        (root / "a.txt").write_text("a different, important file")
        assert "changed while waiting" in refused(await redeem(c, A, r1.request_state))
        assert "already used" in refused(await redeem(c, A, r1.request_state))
    assert (root / "a.txt").exists()


async def test_option_second_tool_careful(reference: ModuleType, root: Path) -> None:
    async with asking_client(build(reference, root, second_tool=True)) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert tools["truncate_file"].annotations.destructive_hint is True  # type: ignore[union-attr]
        r1 = await ask(c, A, tool="truncate_file")
        assert "truncate" in question_of(r1).message
        declined = await decline(c, A, r1.request_state, tool="truncate_file")
        assert "Nothing was truncated" in text(declined)
        assert (root / "a.txt").read_text() == "hello"
        r1 = await ask(c, A, tool="truncate_file")
        assert text(await redeem(c, A, r1.request_state, tool="truncate_file")).startswith("Emptied")
        assert (root / "a.txt").read_text() == ""
        assert "already used" in refused(await redeem(c, A, r1.request_state, tool="truncate_file"))
    async with asking_client(build(reference, root)) as c:
        assert "truncate_file" not in {t.name for t in (await c.list_tools()).tools}


def question_of(r1: types.InputRequiredResult) -> types.ElicitRequestFormParams:
    assert r1.input_requests is not None
    params = r1.input_requests["confirm"].params
    assert isinstance(params, types.ElicitRequestFormParams)
    return params


async def test_flaw_plain_state_loses_only_the_seal(reference: ModuleType, root: Path) -> None:
    """Readable and editable, but still bound to its tool and its other arguments."""
    async with asking_client(build(reference, root, "plain-state", second_tool=True)) as c:
        for args, tool in [({**A, "force": True}, "delete_file"), (A, "truncate_file")]:
            r1 = await ask(c, A)
            assert "another call" in refused(await redeem(c, args, r1.request_state, tool=tool))
    assert (root / "a.txt").read_text() == "hello"


# --- consent ---------------------------------------------------------------------------------


@BOTH
@pytest.mark.parametrize(
    "content", [{"confirm": False}, {}, {"confirm": "false"}], ids=["no", "missing", "str"]
)
async def test_flaw_accept_means_yes(
    reference: ModuleType, root: Path, flawed: bool, content: dict[str, Any]
) -> None:
    async with asking_client(build(reference, root, *maybe(flawed, "accept-means-yes"))) as c:
        r1 = await ask(c, A)
        await redeem(c, A, r1.request_state, content)
    assert (root / "a.txt").exists() != flawed


@BOTH
async def test_flaw_accept_means_yes_null_content(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(build(reference, root, *maybe(flawed, "accept-means-yes"))) as c:
        r1 = await ask(c, A)
        raw = await raw_call(
            c,
            {
                "name": "delete_file",
                "arguments": A,
                "requestState": r1.request_state,
                "inputResponses": {"confirm": {"action": "accept", "content": None}},
            },
        )
    assert raw.get("isError", False) != flawed, raw
    assert (root / "a.txt").exists() != flawed


@BOTH
async def test_flaw_any_answer_key(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(build(reference, root, *maybe(flawed, "any-answer-key"))) as c:
        r1 = await ask(c, A)
        result = await redeem(c, A, r1.request_state, key="not-confirm")
    assert isinstance(result, types.InputRequiredResult) != flawed  # careful asks its question again
    assert (root / "a.txt").exists() != flawed


@BOTH
async def test_flaw_duck_typed_answers(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(build(reference, root, *maybe(flawed, "duck-typed-answers"))) as c:
        r1 = await ask(c, A)
        result = await c.session.call_tool(
            "delete_file",
            A,
            allow_input_required=True,
            input_responses={"confirm": types.ListRootsResult(roots=[])},
            request_state=r1.request_state,
        )
        assert flawed or "not an elicitation result" in refused(result)
    assert (root / "a.txt").exists() != flawed


async def test_flaw_duck_typed_answers_assumes_the_forms_yes(reference: ModuleType, root: Path) -> None:
    """With the name form, the assumed "yes" is the file's own name."""
    async with asking_client(build(reference, root, "duck-typed-answers", form="name")) as c:
        r1 = await ask(c, A)
        result = await c.session.call_tool(
            "delete_file",
            A,
            allow_input_required=True,
            input_responses={"confirm": types.ListRootsResult(roots=[])},
            request_state=r1.request_state,
        )
        assert text(result).startswith("Deleted")
    assert not (root / "a.txt").exists()


# --- paths -----------------------------------------------------------------------------------


@BOTH
async def test_flaw_no_containment(reference: ModuleType, root: Path, flawed: bool) -> None:
    (root.parent / "outside2.txt").write_text("outside")
    async with asking_client(build(reference, root, *maybe(flawed, "no-containment"))) as c:
        assert await ask_and_accept(c, {"path": "../outside.txt"}) == flawed
        assert await ask_and_accept(c, {"path": str(root.parent / "outside2.txt")}) == flawed
    assert (root.parent / "outside.txt").exists() != flawed
    assert (root.parent / "outside2.txt").exists() != flawed


async def test_flaw_no_containment_keeps_the_other_checks(reference: ModuleType, root: Path) -> None:
    (root.parent / "outdir").mkdir()
    (root.parent / "outdir" / "f.txt").write_text("f")
    (root / "out-link").symlink_to(root.parent / "outside.txt")
    (root.parent / "link-dir").symlink_to(root.parent / "outdir")
    async with asking_client(build(reference, root, "no-containment")) as c:
        for path in ["out-link", "../link-dir/f.txt", "../outdir", "../outside.txt\x00", "x" * 5000, "."]:
            assert not await ask_and_accept(c, {"path": path}), path
    assert (root.parent / "outside.txt").exists()
    assert (root.parent / "outdir" / "f.txt").exists()


@BOTH
async def test_flaw_lexical_containment(reference: ModuleType, root: Path, flawed: bool) -> None:
    (root / "link-to-outside.txt").symlink_to(root.parent / "outside.txt")
    async with asking_client(build(reference, root, *maybe(flawed, "lexical-containment"))) as c:
        assert await ask_and_accept(c, {"path": "link-to-outside.txt"}) == flawed
        # Still refused: what is outside as written.
        for path in ["../outside.txt", str(root.parent / "outside.txt"), "../root-evil/f.txt", "."]:
            assert not await ask_and_accept(c, {"path": path}), path
    assert (root.parent / "outside.txt").exists() != flawed  # the link's destination went
    assert (root / "link-to-outside.txt").is_symlink()
    assert (root.parent / "root-evil" / "f.txt").exists()


@BOTH
@pytest.mark.parametrize("path", ["sub", "."], ids=["directory", "root"])
async def test_flaw_deletes_directories(reference: ModuleType, root: Path, flawed: bool, path: str) -> None:
    async with asking_client(build(reference, root, *maybe(flawed, "deletes-directories"))) as c:
        assert await ask_and_accept(c, {"path": path}) == flawed
    assert (root / path).exists() != flawed
    assert (root.parent / "outside.txt").exists()


@BOTH
async def test_flaw_truncates_at_nul(reference: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(build(reference, root, *maybe(flawed, "truncates-at-nul"))) as c:
        r1 = await c.session.call_tool("delete_file", {"path": "a.txt\x00.png"}, allow_input_required=True)
        assert isinstance(r1, types.InputRequiredResult) == flawed
        if isinstance(r1, types.InputRequiredResult):
            assert '"a.txt"' in question_of(r1).message  # asks about the cut name
            await redeem(c, {"path": "a.txt\x00.png"}, r1.request_state)
    assert (root / "a.txt").exists() != flawed


# --- --state signed ----------------------------------------------------------------------------


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def unb64u(text_: str) -> bytes:
    return base64.urlsafe_b64decode(text_ + "=" * (-len(text_) % 4))


async def test_option_state_signed_is_readable_and_careful(reference: ModuleType, root: Path) -> None:
    (root / "canary.txt").write_text("canary")
    async with asking_client(build(reference, root, state="signed", second_tool=True)) as c:
        r1 = await ask(c, A)
        state = r1.request_state or ""
        body, tag = state.split(".")
        claims = json.loads(unb64u(body))
        assert set(claims) == {"nonce", "path", "identity", "tool", "args", "exp"}
        assert (claims["path"], claims["tool"], len(unb64u(tag))) == ("a.txt", "delete_file", 32)
        edited = b64u(json.dumps({**claims, "path": "canary.txt"}).encode()) + "." + tag
        assert "signature" in refused(await redeem(c, {"path": "canary.txt"}, edited))
        forged = [
            "x" * 40,
            "",
            "v1.AAAA",
            body + "." + tag[:-1] + ("A" if tag[-1] != "A" else "B"),
            body + "=." + tag,  # the same bytes, spelled another way
            state + "AAAA",
        ]
        for state in forged:
            assert refused(await redeem(c, A, state)), state
        for args, tool in [(B, "delete_file"), ({**A, "force": True}, "delete_file"), (A, "truncate_file")]:
            assert "another call" in refused(await redeem(c, args, r1.request_state, tool=tool))
        async with asking_client(build(reference, root, state="signed")) as other:
            theirs = await ask(other, A)  # another process: another key
        assert "signature" in refused(await redeem(c, A, theirs.request_state))
        assert text(await redeem(c, A, r1.request_state)).startswith("Deleted")
        (root / "a.txt").write_text("again")
        assert "already used" in refused(await redeem(c, A, r1.request_state))
    assert (root / "canary.txt").exists()
    assert (root / "sub" / "b.txt").exists()


async def test_option_state_signed_with_no_ledger_only_loses_the_ledger(
    reference: ModuleType, root: Path
) -> None:
    async with asking_client(build(reference, root, "no-ledger", state="signed")) as c:
        r1 = await ask(c, A)
        declined = await decline(c, A, r1.request_state)
        assert "Nothing was deleted" in text(declined)
        assert "another call" in refused(await redeem(c, B, r1.request_state))
        assert text(await redeem(c, A, r1.request_state)).startswith("Deleted")  # the replay
    assert (root / "sub" / "b.txt").exists()


async def test_option_state_signed_shared_key_across_replicas(reference: ModuleType, root: Path) -> None:
    key = bytes(range(32))
    async with (
        asking_client(build(reference, root, state="signed", shared_key=key)) as a,
        asking_client(build(reference, root, state="signed", shared_key=key, ttl_seconds=60)) as b,
    ):
        r1 = await ask(a, A)
        # The signature holds on the replica; the nonce is unknown to its own memory ledger.
        assert "already used or unknown" in refused(await redeem(b, A, r1.request_state))


@pytest.mark.parametrize(
    "argv",
    [
        ["--state", "signed", "--flaw", "plain-state"],
        ["--state", "signed", "--flaw", "trusting-state"],
        ["--state", "signed", "--flaw", "unbound-state"],
        ["--state", "signed-and-sealed", "--flaw", "plain-state"],
        ["--flaw", "plain-state", "--flaw", "unbound-state"],
        ["--flaw", "no-containment", "--flaw", "lexical-containment"],
        ["--flaw", "trusting-state", "--flaw", "no-ledger"],
        ["--state", "opaque"],
        ["--second-tool", "--tool-name", "truncate_file"],
    ],
)
def test_nonsense_combinations_are_usage_errors(
    reference: ModuleType, root: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        reference.main(["--root", str(root), *argv])
    assert exit_.value.code == 2
    assert "error:" in capsys.readouterr().err


@BOTH
async def test_flaw_no_expiry(reference: ModuleType, root: Path, flawed: bool) -> None:
    """An answer after the lifetime: the SDK's seal refuses it, unless the lifetime never reached it."""
    async with asking_client(build(reference, root, *maybe(flawed, "no-expiry"), ttl_seconds=0.3)) as c:
        r1 = await ask(c, A)
        await anyio.sleep(0.5)
        if flawed:
            assert text(await redeem(c, A, r1.request_state)).startswith("Deleted")
        else:
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await redeem(c, A, r1.request_state)
    assert (root / "a.txt").exists() != flawed


async def test_option_state_signed_and_sealed_keeps_both_guards(reference: ModuleType, root: Path) -> None:
    """mcp-confirm 0.1.0's shape: its own HMAC-signed state, inside the SDK's seal."""
    server = build(reference, root, state="signed-and-sealed")
    assert any(isinstance(m, RequestStateBoundary) for m in server.middleware)
    async with asking_client(server) as c:
        sealed = (await ask(c, A)).request_state or ""
        assert sealed.startswith("v1.")  # the SDK's token on the wire
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await redeem(c, A, sealed[:-2])
    # Without the SDK's boundary the signer underneath is on its own, and holds.
    server.middleware[:] = [m for m in server.middleware if not isinstance(m, RequestStateBoundary)]
    async with asking_client(server) as c:
        signed = (await ask(c, A)).request_state or ""
        body, tag = signed.split(".")
        assert json.loads(unb64u(body))["path"] == "a.txt"
        edited = b64u(json.dumps({**json.loads(unb64u(body)), "path": "sub/b.txt"}).encode()) + "." + tag
        assert "signature" in refused(await redeem(c, B, edited))
        assert text(await redeem(c, A, signed)).startswith("Deleted")
    assert (root / "sub" / "b.txt").exists()
