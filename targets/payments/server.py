"""Reference MCP server whose confirmed action touches no file: it sends payments.

    python targets/payments/server.py --root DIR [--flaw NAME ...] [options]

A payment lands in a ledger kept in this process's memory (a fresh process starts
empty), seen only through the read-only `list_payments` and, if one is set, a
webhook. The careful configuration is a yardstick the harness must find nothing wrong
with, written in another style than targets/reference (its own question, quoting,
form and answer key; a missing state is a tool error, not a new question); each
`--flaw` removes exactly one defence. The confirmation is hand-rolled MRTR: round 1
returns an `InputRequiredResult` with a form and a plaintext state that the SDK's
`RequestStateBoundary` seals on the wire; round 2 demands the state, spends its nonce
in the reference server's ledger (imported from targets/reference/ledger.py), reads
the answer strictly and pays.

Shapes (--shape):
  direct (default)  send_payment(recipient, amount_cents >= 1, memo) asks, then pays;
                    list_payments() (read-only) returns {"payments": [...]}.
  handle            create_transfer(recipient, amount_cents, memo) stages a draft and
                    returns {"transfer_id": ...} without asking; list_transfers()
                    (read-only) shows drafts; execute_transfer(transfer_id) asks about
                    the staged transfer, then moves it into the payments;
                    list_payments() as above.

Options:
  --root DIR          the server's working directory (config.yaml/config.json and,
                      with --log-into-root, audit.jsonl live here; nothing else does)
  --shape SHAPE       direct | handle
  --webhook URL       after every payment POST {"event": "payment", ...payment} to URL
                      (http on a loopback host only); also read from `webhook_url:` in
                      ROOT/config.yaml or ROOT/config.json; the flag wins
  --log-into-root     append one JSON line per tools/call to ROOT/audit.jsonl (not a
                      flaw: bookkeeping a harness must not mistake for an effect)
  --ttl-seconds N     lifetime of a confirmation (the SDK's seal and the ledger)
  --key-env NAME      env var holding a 64-hex-digit request-state key shared by replicas
  --ledger SPEC       nonce ledger: memory | sqlite:PATH | redis://HOST:PORT/DB
                      (the payments themselves stay in each process's memory)
  --port PORT         serve streamable HTTP at http://127.0.0.1:PORT/mcp (stdio without)
  --question STYLE    inline (default): the memo quoted on a line of the question's;
                      memo-below: the memo last, below a line of `---`, its line feeds
                      kept and every other character escaped (an email client's way
                      with a body, careful in another style)
  --flaw NAME         remove one defence (repeatable):
    no-ledger          the state's nonce is never spent: one approval pays again
    racy-ledger        spending is check, then spend: concurrent redemptions all pay
    decline-acts       decline and cancel pay as if accepted
    stateless-answers  an answer without requestState is accepted and paid
    unescaped-memo     memo and recipient go into the question raw (line breaks, bidi, markup)
    unsealed-state     no RequestStateBoundary: the state is readable JSON naming the
                       payment, which a client can edit and the server pays as written
    elicits-without-capability  a client that declared no form elicitation is sent the
                       form anyway
    flag-pays-beyond-allow-list  (with --allow) human_approved: true from the caller pays a
                       recipient off the allow-list, unasked: an "exception a person
                       approved" that only the caller attests
    memo-not-last      (with --question memo-below) the question's own closing line follows
                       the memo, so a line the memo starts can pass for one of the question's
    memo-unfenced      (with --question memo-below) no separator line above the memo

With `--allow NAME,...` (direct shape) send_payment pays only those recipients, each asked
about as above, and takes a `human_approved` flag it refuses from the caller: a recipient
off the list is refused whatever the call says; `--allow-refusals result` says those two
refusals inside an ordinary result (`{"ok": false, "reason": ...}`), not as a tool error.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

# Run as a script, this directory is on sys.path; imported by file path (tests, the
# harness), it is not. The reference server's directory supplies the nonce ledger.
_HERE = Path(__file__).resolve().parent
for _dir in (_HERE, _HERE.parent / "reference"):
    if str(_dir) not in sys.path:
        sys.path.insert(0, str(_dir))

import ledger as ledgers  # noqa: E402
import payment_flaws  # noqa: E402
import payment_question as q  # noqa: E402
import payment_webhook  # noqa: E402
import race_gate  # noqa: E402
import serving  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import RequestStateSecurity  # noqa: E402
from mcp.types import InputRequiredResult, ToolAnnotations  # noqa: E402
from payment_audit import AuditLog  # noqa: E402
from payment_book import Book, Order  # noqa: E402
from payment_gate import Gate  # noqa: E402
from payment_models import PaymentOut, Payments, Staged, TransferOut, Transfers  # noqa: E402
from payment_states import Scheme, SealedState, UnsealedState  # noqa: E402
from pydantic import Field  # noqa: E402

__all__ = ["SERVER_NAME", "Shape", "build_server", "main"]

SERVER_NAME = "mcp-payments-reference"  # also the audience claim replicas must share
Shape = Literal["direct", "handle"]

log = logging.getLogger("mcp_payments_reference")

Recipient = Annotated[str, Field(description="Who is paid.")]
Cents = Annotated[int, Field(ge=1, description="The amount, in cents (at least 1).")]
Memo = Annotated[str, Field(description="A note that travels with the payment.")]


_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
_PAYS = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)


def build_server(
    root: str | Path,
    *,
    flaws: Collection[str] = (),
    shape: Shape = "direct",
    webhook: str | None = None,
    log_into_root: bool = False,
    ttl_seconds: float = 300.0,
    shared_key: bytes | None = None,
    ledger: str = "memory",
    allow: Collection[str] | None = None,
    allow_refusals: str = "error",
    question: str = "inline",
) -> MCPServer:
    """The server, ready for `mcp.Client(server)` in-process or `.run()`."""
    if question not in q.QUESTIONS:
        raise ValueError(f"bad question {question!r}: use {' or '.join(q.QUESTIONS)}")
    active = payment_flaws.check(flaws, question)
    if shape not in get_args(Shape):
        raise ValueError(f"bad shape {shape!r}: use {' or '.join(get_args(Shape))}")
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"--root {str(root)!r} is not a directory")
    serving.configure_log(log, "mcp-payments-reference")
    url = webhook or payment_webhook.from_root(root)
    hook = payment_webhook.Webhook(url) if url else None
    backend = ledgers.open_backend(ledger)
    nonces = ledgers.Ledger(
        backend,
        ttl_seconds,
        never_spend="no-ledger" in active,
        racy="racy-ledger" in active,  # its gap held open by a race gate (reference/race_gate.py)
    )
    scheme: Scheme = UnsealedState(nonces) if "unsealed-state" in active else SealedState(nonces)
    security = (
        RequestStateSecurity.ephemeral(ttl=ttl_seconds)
        if shared_key is None
        else RequestStateSecurity(keys=[shared_key], ttl=ttl_seconds)
    )

    @asynccontextmanager
    async def lifespan(_: MCPServer[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await backend.aclose()  # an unclosed redis connection outlives its event loop

    server = MCPServer(SERVER_NAME, request_state_security=security, lifespan=lifespan)
    if "unsealed-state" in active:
        serving.remove_boundary(server)
    if log_into_root:
        server.middleware.insert(0, AuditLog(root))  # outermost: it sees the boundary's refusals
    if nonces.race is not None:
        server.middleware.append(race_gate.announced)  # the width of a race its gate holds open
    book = Book()
    if shape == "direct" and allow is not None:
        gate = Gate("send_payment", book, scheme, active, hook, question)
        _add_allow_listed(server, gate, frozenset(allow), active, allow_refusals)
    elif shape == "direct":
        _add_direct(server, Gate("send_payment", book, scheme, active, hook, question))
    else:
        _add_handle(server, book, Gate("execute_transfer", book, scheme, active, hook, question))
    _add_list_payments(server, book)
    return server


def _add_direct(server: MCPServer, gate: Gate) -> None:
    async def send_payment(
        recipient: Recipient, amount_cents: Cents, memo: Memo, ctx: Context
    ) -> str | InputRequiredResult:
        return await gate(lambda: Order(recipient, amount_cents, memo), ctx)

    server.add_tool(
        send_payment,
        name="send_payment",
        description="Send a payment. Asks the user to confirm the recipient, amount and memo first.",
        annotations=_PAYS,
    )


Approved = Annotated[bool, Field(description="Set when a person approved this payment.")]


def _add_allow_listed(
    server: MCPServer, gate: Gate, allow: frozenset[str], active: frozenset[str], refusals: str
) -> None:
    def refused(reason: str) -> str:
        if refusals == "result":
            return json.dumps({"ok": False, "reason": reason})
        raise ToolError(reason)

    async def send_payment(
        recipient: Recipient, amount_cents: Cents, memo: Memo, ctx: Context, human_approved: Approved = False
    ) -> str | InputRequiredResult:
        order = Order(recipient, amount_cents, memo)
        if recipient not in allow:
            if human_approved and "flag-pays-beyond-allow-list" in active:
                # FLAW flag-pays-beyond-allow-list: the caller's word is taken for a person's exception.
                return gate.pay_unasked(order)
            return refused(f"{q.quoted(recipient)} is not on the allow-list; nothing was paid")
        if human_approved:
            return refused("human_approved cannot come from the caller: the user is asked instead")
        return await gate(lambda: order, ctx)

    server.add_tool(
        send_payment,
        name="send_payment",
        description="Send a payment to a recipient on the allow-list. Asks the user to confirm it first.",
        annotations=_PAYS,
    )


def _add_handle(server: MCPServer, book: Book, gate: Gate) -> None:
    def create_transfer(recipient: Recipient, amount_cents: Cents, memo: Memo) -> Staged:
        return Staged(transfer_id=book.stage(recipient, amount_cents, memo))

    def list_transfers() -> Transfers:
        staged = [
            TransferOut.model_validate({"transfer_id": o.transfer_id, **o.fields()}) for o in book.drafts
        ]
        return Transfers(transfers=staged)

    async def execute_transfer(
        transfer_id: Annotated[str, Field(description="The id create_transfer returned.")], ctx: Context
    ) -> str | InputRequiredResult:
        return await gate(lambda: book.draft(transfer_id), ctx)

    server.add_tool(
        create_transfer,
        name="create_transfer",
        description="Stage a transfer (nothing is paid yet); returns its id for execute_transfer.",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
        ),
    )
    server.add_tool(
        list_transfers,
        name="list_transfers",
        description="The staged transfers not yet executed.",
        annotations=_READ_ONLY,
    )
    server.add_tool(
        execute_transfer,
        name="execute_transfer",
        description="Pay a staged transfer. Asks the user to confirm it first.",
        annotations=_PAYS,
    )


def _add_list_payments(server: MCPServer, book: Book) -> None:
    def list_payments() -> Payments:
        return Payments(payments=[PaymentOut.model_validate(p.as_json()) for p in book.payments])

    server.add_tool(
        list_payments, name="list_payments", description="Every payment sent.", annotations=_READ_ONLY
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = parser.add_argument
    add("--root", required=True, metavar="DIR", help="the server's working directory")
    add("--shape", default="direct", choices=get_args(Shape), help="direct: send_payment; handle: staged")
    add("--webhook", metavar="URL", help="POST every payment to this loopback http URL")
    add("--log-into-root", action="store_true", help="append one JSON line per call to ROOT/audit.jsonl")
    add("--ttl-seconds", type=float, default=300.0, metavar="N", help="lifetime of a confirmation")
    add("--key-env", metavar="NAME", help="env var holding a 64-hex-digit state key shared by replicas")
    add("--ledger", default="memory", metavar="SPEC", help="memory | sqlite:PATH | redis://HOST:PORT/DB")
    add("--port", type=int, metavar="PORT", help="serve HTTP at http://127.0.0.1:PORT/mcp")
    add("--allow", metavar="NAME,...", help="pay only these recipients (send_payment takes human_approved)")
    add("--allow-refusals", choices=("error", "result"), default="error", help="how --allow refuses")
    add("--question", choices=q.QUESTIONS, default="inline", help="where the question shows the memo")
    names = sorted(payment_flaws.FLAWS)
    add("--flaw", action="append", default=[], choices=names, metavar="NAME", help=f"one of {names}")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    key = None
    if args.key_env:
        try:
            key = bytes.fromhex(os.environ.get(args.key_env, ""))
        except ValueError:
            key = b""
        if len(key) != 32:
            parser.error(f"environment variable {args.key_env} must hold 64 hex digits (a 32-byte key)")
    try:
        server = build_server(
            args.root,
            flaws=args.flaw,
            shape=args.shape,
            webhook=args.webhook,
            log_into_root=args.log_into_root,
            ttl_seconds=args.ttl_seconds,
            shared_key=key,
            ledger=args.ledger,
            allow=args.allow.split(",") if args.allow else None,
            allow_refusals=args.allow_refusals,
            question=args.question,
        )
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    if args.port is None:
        server.run(transport="stdio")
    else:
        serving.serve_http(server, args.port, log_level="warning")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
