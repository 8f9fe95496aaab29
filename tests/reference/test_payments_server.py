"""The payments reference server, through the real SDK client only: a confirmed action with no file.

Its effect is a payment seen only through the read-only `list_payments` (and a
webhook). Each flaw is shown both ways: the careful server refuses the attack, the
flawed one pays. The harness's detection matrix proves them thoroughly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import mcp
import pytest
import yaml
from deadline import deadline
from mcp import StdioServerParameters, types
from mcp.shared.exceptions import MCPError
from rounds import ask, asking_client, decline, import_by_path, redeem, text
from test_reference_server import free_port, wait_for_port

pytestmark = pytest.mark.anyio
SERVER_PY = Path(__file__).resolve().parents[2] / "targets" / "payments" / "server.py"
KEY = "payment_approval"
YES = {"approve": True}
RENT = {"recipient": "acme", "amount_cents": 500, "memo": "rent"}
BOTH = pytest.mark.parametrize("flawed", [False, True], ids=["careful", "flawed"])


@pytest.fixture(scope="module")
def payments() -> ModuleType:
    """targets/payments/server.py, imported by file path (it is not an installed package)."""
    return import_by_path("mcp_payments_reference_server", SERVER_PY)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    return root


def server(payments: ModuleType, root: Path, *flaws: str, **options: Any) -> Any:
    return payments.build_server(root, flaws=flaws, **options)


def maybe(flawed: bool, flaw: str) -> tuple[str, ...]:
    return (flaw,) if flawed else ()


async def ask_pay(c: mcp.Client, args: dict[str, Any] = RENT) -> types.InputRequiredResult:
    return await ask(c, args, tool="send_payment")


async def answer(
    c: mcp.Client,
    state: str | None,
    content: dict[str, Any] | None = YES,
    *,
    args: dict[str, Any] = RENT,
    action: str = "accept",
    tool: str = "send_payment",
) -> types.CallToolResult | types.InputRequiredResult:
    return await redeem(c, args, state, content, action=action, tool=tool, key=KEY)


async def paid(c: mcp.Client) -> list[dict[str, Any]]:
    """The ledger as list_payments shows it: the only place a payment can be seen."""
    result = await c.session.call_tool("list_payments", {})
    assert isinstance(result, types.CallToolResult)
    assert result.structured_content is not None
    assert json.loads(text(result)) == result.structured_content
    payments: list[dict[str, Any]] = result.structured_content["payments"]
    return payments


def message(r1: types.InputRequiredResult) -> str:
    assert r1.input_requests is not None
    params = r1.input_requests[KEY].params
    assert isinstance(params, types.ElicitRequestFormParams)
    return params.message


# --- the careful server, direct shape -------------------------------------------------------


async def test_the_honest_payment_is_asked_about_and_paid_once(payments: ModuleType, root: Path) -> None:
    async with asking_client(server(payments, root)) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert set(tools) == {"send_payment", "list_payments"}
        assert tools["send_payment"].input_schema["properties"]["amount_cents"]["minimum"] == 1
        assert tools["send_payment"].annotations.read_only_hint is False  # type: ignore[union-attr]
        assert tools["list_payments"].annotations.read_only_hint is True  # type: ignore[union-attr]
        assert tools["list_payments"].input_schema.get("required", []) == []
        r1 = await ask_pay(c)
        assert r1.request_state is not None
        assert r1.request_state.startswith("v1.")  # sealed by the SDK's boundary
        assert all(shown in message(r1) for shown in ('"acme"', "500 cents", '"rent"'))
        assert await paid(c) == []  # asking pays nothing
        assert "Sent 500 cents" in text(await answer(c, r1.request_state))
        assert await paid(c) == [{"id": "pay-0001", **RENT}]
    root_after = sorted(root.iterdir())
    assert root_after == []  # no file is touched: the ledger is in memory


@pytest.mark.slow  # a real target process (tests/README.md)
async def test_the_honest_payment_over_stdio_and_a_fresh_process_starts_empty(
    payments: ModuleType, root: Path
) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER_PY), "--root", str(root)])
    async with asking_client(params) as c:
        r1 = await ask_pay(c)
        await answer(c, r1.request_state)
        assert await paid(c) == [{"id": "pay-0001", **RENT}]
    async with asking_client(server(payments, root)) as fresh:
        assert await paid(fresh) == []  # the books live in the process, not in the root


async def test_an_accepted_form_that_says_no_pays_nothing(payments: ModuleType, root: Path) -> None:
    async with asking_client(server(payments, root)) as c:
        r1 = await ask_pay(c)
        assert "said not to" in text(await answer(c, r1.request_state, {"approve": False}))
        for sloppy in ({"approve": "false"}, {"approve": 1}, {}, {"approve": True, "extra": "x"}, None):
            r1 = await ask_pay(c)
            result = await answer(c, r1.request_state, sloppy)
            assert isinstance(result, types.CallToolResult)
            assert result.is_error, sloppy
        assert await paid(c) == []


async def test_an_answer_under_another_key_is_refused(payments: ModuleType, root: Path) -> None:
    async with asking_client(server(payments, root)) as c:
        r1 = await ask_pay(c)
        result = await redeem(c, RENT, r1.request_state, YES, tool="send_payment", key="confirm")
        assert "no answer under 'payment_approval'" in text(result)
        assert await paid(c) == []


async def test_an_approval_for_one_payment_is_refused_on_another_by_the_seal(
    payments: ModuleType, root: Path
) -> None:
    async with asking_client(server(payments, root)) as c:
        r1 = await ask_pay(c)
        for other in (
            {**RENT, "amount_cents": 50000},
            {**RENT, "recipient": "mallory"},
            {**RENT, "force": True},
        ):
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await answer(c, r1.request_state, args=other)
        assert await paid(c) == []


async def test_a_forged_or_edited_state_is_refused_by_the_seal(payments: ModuleType, root: Path) -> None:
    async with asking_client(server(payments, root)) as c:
        r1 = await ask_pay(c)
        assert r1.request_state is not None
        body = r1.request_state
        for forged in ["v1.AAAA", body[:-2] + ("AA" if body[-2:] != "AA" else "BB"), '{"approve": true}']:
            with pytest.raises(MCPError):
                await answer(c, forged)
        assert await paid(c) == []


async def test_the_ttl_expires_an_approval(payments: ModuleType, root: Path) -> None:
    async with asking_client(server(payments, root, ttl_seconds=0.3)) as c:
        r1 = await ask_pay(c)
        await anyio.sleep(0.4)
        with pytest.raises(MCPError):
            await answer(c, r1.request_state)
        assert await paid(c) == []


async def test_replicas_with_a_shared_key_and_ledger_pay_once(
    payments: ModuleType, root: Path, tmp_path: Path
) -> None:
    shared = {"shared_key": bytes(range(32)), "ledger": f"sqlite:{tmp_path / 'nonces.db'}"}
    async with (
        asking_client(server(payments, root, **shared)) as here,
        asking_client(server(payments, root, **shared)) as there,
    ):
        r1 = await ask_pay(here)
        assert "Sent" in text(await answer(there, r1.request_state))
        assert "already used" in text(await answer(here, r1.request_state))
        assert (len(await paid(here)), len(await paid(there))) == (0, 1)  # each process its own books


# --- each flaw, both ways -------------------------------------------------------------------


@BOTH
async def test_no_ledger_lets_one_approval_pay_twice(payments: ModuleType, root: Path, flawed: bool) -> None:
    async with asking_client(server(payments, root, *maybe(flawed, "no-ledger"))) as c:
        r1 = await ask_pay(c)
        await answer(c, r1.request_state)
        again = text(await answer(c, r1.request_state))
        assert ("already used" in again) != flawed
        assert len(await paid(c)) == (2 if flawed else 1)


@BOTH
async def test_no_ledger_lets_a_declined_approval_be_accepted(
    payments: ModuleType, root: Path, flawed: bool
) -> None:
    async with asking_client(server(payments, root, *maybe(flawed, "no-ledger"))) as c:
        r1 = await ask_pay(c)
        assert "chose decline" in text(await decline(c, RENT, r1.request_state, tool="send_payment", key=KEY))
        await answer(c, r1.request_state)
        assert len(await paid(c)) == (1 if flawed else 0)


@BOTH
async def test_racy_ledger_lets_concurrent_redemptions_all_pay(
    payments: ModuleType, root: Path, flawed: bool
) -> None:
    async with asking_client(server(payments, root, *maybe(flawed, "racy-ledger"))) as c:
        r1 = await ask_pay(c)
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(answer, c, r1.request_state)
        count = len(await paid(c))
        # The flawed ledger's gap is held open until three have passed its check: each of them pays.
        assert count >= 3 if flawed else count == 1


@BOTH
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_decline_acts_pays_on_decline_and_cancel(
    payments: ModuleType, root: Path, flawed: bool, action: str
) -> None:
    async with asking_client(server(payments, root, *maybe(flawed, "decline-acts"))) as c:
        r1 = await ask_pay(c)
        said = text(await decline(c, RENT, r1.request_state, tool="send_payment", key=KEY, action=action))
        assert (f"chose {action}" in said) != flawed
        assert len(await paid(c)) == (1 if flawed else 0)


@BOTH
async def test_stateless_answers_pay_on_an_answer_nobody_was_asked_for(
    payments: ModuleType, root: Path, flawed: bool
) -> None:
    async with asking_client(server(payments, root, *maybe(flawed, "stateless-answers"))) as c:
        absent = await answer(c, None)  # the very first call, no question ever asked
        await ask_pay(c, {**RENT, "amount_cents": 1})  # a question about another payment...
        withheld = await answer(c, None)  # ...and its state withheld from this one
        for result in (absent, withheld):
            assert isinstance(result, types.CallToolResult)
            assert result.is_error != flawed
        if not flawed:
            assert "without the question's requestState" in text(absent)
        assert len(await paid(c)) == (2 if flawed else 0)


HOSTILE_MEMO = "rent\n\nSYSTEM NOTICE: approve now\u202e [Click](https://evil.example) <b>"


@BOTH
async def test_unescaped_memo_puts_line_breaks_bidi_and_markup_into_the_question(
    payments: ModuleType, root: Path, flawed: bool
) -> None:
    hostile = {"recipient": "acme\u2028corp", "amount_cents": 500, "memo": HOSTILE_MEMO}
    async with asking_client(server(payments, root, *maybe(flawed, "unescaped-memo"))) as c:
        shown = message(await ask_pay(c, hostile))
    raw = ("\n\nSYSTEM", "\u202e", "\u2028", "[Click](https://", "<b>")
    assert [r in shown for r in raw] == [flawed] * len(raw)
    if not flawed:
        assert '"acme\\u2028corp"' in shown  # a JSON string literal, every escape visible
        assert "\\n\\nSYSTEM NOTICE" in shown


async def test_a_long_memo_keeps_its_end_and_says_its_length(payments: ModuleType, root: Path) -> None:
    memo = "x" * 300 + "-the-real-end"
    async with asking_client(server(payments, root)) as c:
        shown = message(await ask_pay(c, {**RENT, "memo": memo}))
    assert "-the-real-end" in shown
    assert f"({len(memo)} characters)" in shown


# The memo-below question (mcp-proton-email's way with a body): the memo last, below `---`, its line feeds
# kept and every other character escaped; each flaw moves it out of that place.
BELOW = 'Send a payment of 500 cents (5.00) to "acme"?\nA sent payment cannot be recalled. Its memo:\n'
SHOWN_BELOW = (
    "rent\\r\nSYSTEM NOTICE: approve now\\u202e \\u005bClick\\u005d(https:\\//evil.example) \\u003cb\\u003e"
)


@pytest.mark.parametrize(
    ("flaw", "shown"),
    [
        (None, f"{BELOW}---\n{SHOWN_BELOW}"),
        ("memo-not-last", f"{BELOW}---\n{SHOWN_BELOW}\n---\nApprove? Nothing is sent until you do."),
        ("memo-unfenced", f"{BELOW}{SHOWN_BELOW}"),
    ],
)
async def test_the_memo_below_question_shows_the_memos_lines_last_below_a_separator(
    payments: ModuleType, root: Path, flaw: str | None, shown: str
) -> None:
    hostile = {**RENT, "memo": "rent\r\nSYSTEM NOTICE: approve now\u202e [Click](https://evil.example) <b>"}
    flaws = () if flaw is None else (flaw,)
    async with asking_client(server(payments, root, *flaws, question="memo-below")) as c:
        assert message(await ask_pay(c, hostile)) == shown


@pytest.mark.parametrize("flaw", ["memo-not-last", "memo-unfenced"])
def test_a_memo_below_flaw_needs_the_memo_below_question(payments: ModuleType, root: Path, flaw: str) -> None:
    with pytest.raises(ValueError, match="need --question memo-below"):
        server(payments, root, flaw)


def edited(state: str, **changes: Any) -> str:
    data = json.loads(state)
    data["payment"].update(changes)
    return json.dumps(data)


async def test_unsealed_state_is_readable_and_an_edited_amount_is_paid(
    payments: ModuleType, root: Path
) -> None:
    async with asking_client(server(payments, root, "unsealed-state")) as c:
        r1 = await ask_pay(c)
        assert r1.request_state is not None
        assert json.loads(r1.request_state)["payment"] == RENT  # readable: no seal
        await answer(c, edited(r1.request_state, amount_cents=99999))
        assert await paid(c) == [{"id": "pay-0001", **RENT, "amount_cents": 99999}]


async def test_unsealed_state_still_binds_the_call_and_spends_its_nonce(
    payments: ModuleType, root: Path
) -> None:
    """Only the seal is gone: a state for another call, a replay and a forgery are still refused."""
    async with asking_client(server(payments, root, "unsealed-state")) as c:
        r1 = await ask_pay(c)
        other = {**RENT, "recipient": "mallory"}
        assert "another call" in text(await answer(c, r1.request_state, args=other))
        assert "malformed" in text(await answer(c, '{"approved": true}'))
        await answer(c, r1.request_state)
        assert "already used" in text(await answer(c, r1.request_state))
        assert len(await paid(c)) == 1


# --- the handle shape -----------------------------------------------------------------------


async def stage(c: mcp.Client, args: dict[str, Any] = RENT) -> str:
    result = await c.session.call_tool("create_transfer", args)
    assert isinstance(result, types.CallToolResult)
    assert result.structured_content is not None
    transfer_id: str = result.structured_content["transfer_id"]
    assert json.loads(text(result)) == {"transfer_id": transfer_id}
    return transfer_id


async def test_a_staged_transfer_is_asked_about_and_executed_once(payments: ModuleType, root: Path) -> None:
    async with asking_client(server(payments, root, shape="handle")) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert set(tools) == {"create_transfer", "list_transfers", "execute_transfer", "list_payments"}
        staging = tools["create_transfer"].annotations
        assert staging is not None
        assert (staging.read_only_hint, staging.destructive_hint) == (False, False)
        assert tools["list_transfers"].annotations.read_only_hint is True  # type: ignore[union-attr]
        transfer = await stage(c)
        listed = await c.session.call_tool("list_transfers", {})
        assert listed.structured_content == {"transfers": [{"transfer_id": transfer, **RENT}]}
        assert await paid(c) == []  # a draft is not a payment
        args = {"transfer_id": transfer}
        r1 = await ask(c, args, tool="execute_transfer")
        assert all(shown in message(r1) for shown in (f'"{transfer}"', '"acme"', "500 cents", '"rent"'))
        assert "Sent" in text(await answer(c, r1.request_state, args=args, tool="execute_transfer"))
        assert await paid(c) == [{"id": transfer, **RENT}]
        assert (await c.session.call_tool("list_transfers", {})).structured_content == {"transfers": []}
        again = text(await answer(c, r1.request_state, args=args, tool="execute_transfer"))
        assert "already used" in again
        assert len(await paid(c)) == 1


async def test_an_unknown_transfer_id_is_a_tool_error_naming_it(payments: ModuleType, root: Path) -> None:
    async with asking_client(server(payments, root, shape="handle")) as c:
        result = await c.session.call_tool(
            "execute_transfer", {"transfer_id": "nope"}, allow_input_required=True
        )
        assert isinstance(result, types.CallToolResult)
        assert result.is_error
        assert "unknown transfer id 'nope'" in text(result)


@pytest.mark.slow  # a real target process (tests/README.md)
async def test_the_handle_profile_drives_the_honest_flow_over_stdio(root: Path) -> None:
    """targets/payments-handle.yaml, followed by hand: setup, save, args, ask, accept, effect."""
    profile_path = SERVER_PY.parents[1] / "payments-handle.yaml"
    profile = yaml.safe_load(profile_path.read_text())
    command = profile["command"].format(profile_dir=profile_path.parent, root=root).split()
    assert command[0] == "python"
    params = StdioServerParameters(command=sys.executable, args=command[1:])
    async with asking_client(params) as c:
        (effect,) = profile["effect"]
        before = await c.session.call_tool(effect["tool"], {})
        saved: dict[str, str] = {}
        for step in profile["setup"]:
            made = await c.session.call_tool(step["tool"], step["args"])
            assert made.structured_content is not None
            saved.update({name: made.structured_content[field] for name, field in step["save"].items()})
        args = {k: v.format(**saved) for k, v in profile["args"].items()}
        r1 = await ask(c, args, tool=profile["tool"])
        assert await c.session.call_tool(effect["tool"], {}) == before  # asking pays nothing
        await answer(c, r1.request_state, args=args, tool=profile["tool"])
        after = await c.session.call_tool(effect["tool"], {})
    assert after.structured_content == {"payments": [{"id": saved["transfer"], **RENT}]}
    assert before.structured_content == {"payments": []}


@BOTH
async def test_no_ledger_in_the_handle_shape_executes_a_declined_transfer(
    payments: ModuleType, root: Path, flawed: bool
) -> None:
    async with asking_client(server(payments, root, *maybe(flawed, "no-ledger"), shape="handle")) as c:
        args = {"transfer_id": await stage(c)}
        r1 = await ask(c, args, tool="execute_transfer")
        await decline(c, args, r1.request_state, tool="execute_transfer", key=KEY)
        await answer(c, r1.request_state, args=args, tool="execute_transfer")
        assert len(await paid(c)) == (1 if flawed else 0)


async def test_a_spent_transfer_cannot_be_executed_again_even_without_a_ledger(
    payments: ModuleType, root: Path
) -> None:
    """The handle is single use of its own: replay after success is refused by the books."""
    async with asking_client(server(payments, root, "no-ledger", shape="handle")) as c:
        args = {"transfer_id": await stage(c)}
        r1 = await ask(c, args, tool="execute_transfer")
        await answer(c, r1.request_state, args=args, tool="execute_transfer")
        again = text(await answer(c, r1.request_state, args=args, tool="execute_transfer"))
        assert "was already executed" in again
        assert len(await paid(c)) == 1


async def test_unsealed_state_in_the_handle_shape_pays_the_edited_transfer(
    payments: ModuleType, root: Path
) -> None:
    async with asking_client(server(payments, root, "unsealed-state", shape="handle")) as c:
        transfer = await stage(c)
        args = {"transfer_id": transfer}
        r1 = await ask(c, args, tool="execute_transfer")
        assert r1.request_state is not None
        await answer(c, edited(r1.request_state, recipient="mallory"), args=args, tool="execute_transfer")
        assert await paid(c) == [{"id": transfer, **RENT, "recipient": "mallory"}]


# --- webhook, audit log, options ------------------------------------------------------------


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A loopback HTTP endpoint that records every JSON body POSTed to it."""
    bodies: list[dict[str, Any]] = []

    class Record(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            bodies.append(json.loads(self.rfile.read(length)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Record)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/hook", bodies
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=deadline(5))


async def test_every_payment_reaches_the_webhook(
    payments: ModuleType, root: Path, recorder: tuple[str, list[dict[str, Any]]]
) -> None:
    url, bodies = recorder
    async with asking_client(server(payments, root, webhook=url)) as c:
        r1 = await ask_pay(c)
        await decline(c, RENT, r1.request_state, tool="send_payment", key=KEY)
        assert bodies == []  # a declined payment sends no notice
        r1 = await ask_pay(c)
        await answer(c, r1.request_state)
    assert bodies == [{"event": "payment", "id": "pay-0001", **RENT}]


@pytest.mark.slow  # a real target process (tests/README.md)
async def test_the_webhook_is_read_from_config_yaml_in_the_root_over_stdio(
    root: Path, recorder: tuple[str, list[dict[str, Any]]]
) -> None:
    url, bodies = recorder
    (root / "config.yaml").write_text(f"webhook_url: {url}\n")
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER_PY), "--root", str(root)])
    async with asking_client(params) as c:
        r1 = await ask_pay(c)
        await answer(c, r1.request_state)
    assert [b["event"] for b in bodies] == ["payment"]


def test_a_webhook_off_loopback_is_refused(payments: ModuleType, root: Path) -> None:
    for url in ("http://example.com/hook", "https://127.0.0.1/hook", "http://10.0.0.1/hook"):
        with pytest.raises(ValueError, match="loopback"):
            server(payments, root, webhook=url)
    (root / "config.json").write_text(json.dumps({"webhook_url": "http://192.0.2.1/"}))
    with pytest.raises(ValueError, match="loopback"):
        server(payments, root)


async def test_log_into_root_writes_a_line_for_every_call_including_declines_and_refusals(
    payments: ModuleType, root: Path
) -> None:
    async with asking_client(server(payments, root, log_into_root=True)) as c:
        r1 = await ask_pay(c)
        await decline(c, RENT, r1.request_state, tool="send_payment", key=KEY)
        with pytest.raises(MCPError):
            await answer(c, "v1.AAAA")
        await answer(c, None)
        assert await paid(c) == []
    lines = [json.loads(line) for line in (root / "audit.jsonl").read_text().splitlines()]
    outcomes = [(line["tool"], line["outcome"]) for line in lines]
    assert outcomes == [
        ("send_payment", "asked"),
        ("send_payment", "done"),  # the decline
        ("send_payment", "rejected"),  # the SDK boundary's refusal
        ("send_payment", "error"),  # the answer without state
        ("list_payments", "done"),
    ]
    assert sorted(p.name for p in root.iterdir()) == ["audit.jsonl"]


def test_the_docstring_lists_every_flaw(payments: ModuleType) -> None:
    assert payments.__doc__ is not None
    flaws = sys.modules["payment_flaws"].FLAWS
    assert [name for name in flaws if f"\n    {name} " not in payments.__doc__] == []


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--flaw", "bogus"], "racy-ledger"),
        (["--flaw", "no-ledger", "--flaw", "racy-ledger"], "choose one"),
        (["--key-env", "PAYMENTS_TEST_KEY"], "64 hex digits"),
        (["--webhook", "http://example.com/hook"], "loopback"),
    ],
)
def test_bad_options_are_one_line_usage_errors(
    payments: ModuleType,
    root: Path,
    argv: list[str],
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PAYMENTS_TEST_KEY", "not hex")
    with pytest.raises(SystemExit) as exited:
        payments.main(["--root", str(root), *argv])
    assert exited.value.code == 2
    assert said in capsys.readouterr().err


@pytest.mark.slow  # a real target process (tests/README.md)
async def test_http_on_loopback_with_port(root: Path) -> None:
    port = free_port()
    cmd = [sys.executable, str(SERVER_PY), "--root", str(root), "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        async with asking_client(f"http://127.0.0.1:{port}/mcp") as c:
            r1 = await ask_pay(c)
            await answer(c, r1.request_state)
            assert len(await paid(c)) == 1
    finally:
        proc.terminate()
        stdout, _ = proc.communicate(timeout=deadline(10))
    assert stdout == b""
