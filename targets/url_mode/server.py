"""Reference MCP server that confirms a payment with URL-mode elicitation (MCP 2026-07-28).

    PEOPLE="alice=TOKEN,bob=TOKEN" python targets/url_mode/server.py --root DIR --people-env PEOPLE

`send_payment(recipient, amount_cents, memo)` answers round one with an
`InputRequiredResult` whose one question is `mode: "url"`: a page on this process's
own loopback port (url_pages.py) where the person who started the call, signed in
with their session cookie, reads the payment and approves it. An `accept` is their
consent to open the page, not the approval: the retry pays only once the page was
completed by that person, and answers another `InputRequiredResult` (the same page)
while it is not; a decline or cancel closes it. The state is sealed by the SDK's
`RequestStateBoundary` and its nonce is spent in the reference server's ledger, so
one approval pays once. A client that did not declare URL-mode elicitation gets
-32021. Payments are seen through the read-only `list_payments`.

The first person in `--people-env` is the one using the MCP client (stdio has one
user); the others are other users of the same server. Each `--flaw` (url_flaws.py)
removes exactly one defence.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import sys
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated

_HERE = Path(__file__).resolve().parent
for _dir in (_HERE, _HERE.parent / "payments", _HERE.parent / "reference"):
    if str(_dir) not in sys.path:
        sys.path.insert(0, str(_dir))

import anyio  # noqa: E402
import ledger as ledgers  # noqa: E402
import payment_question as q  # noqa: E402
import serving  # noqa: E402
import url_flaws  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import RequestStateSecurity  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.types import (  # noqa: E402
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ClientCapabilities,
    ElicitRequest,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
    ToolAnnotations,
)
from payment_book import Book, Order, Refused  # noqa: E402
from payment_models import PaymentOut, Payments  # noqa: E402
from pydantic import Field  # noqa: E402
from url_pages import COMPLETED, PENDING, PageServer, Store  # noqa: E402

__all__ = ["SERVER_NAME", "build_server", "main"]

SERVER_NAME = "mcp-url-mode-reference"
ANSWER_KEY = "payment_page"
MESSAGE = "Open the approval page to review this payment and approve it there."
_SPENT = "this approval was already used, declined or has expired; ask again"
_POLL = 0.05

log = logging.getLogger("mcp_url_mode_reference")


def event(kind: str, **fields: object) -> None:
    log.info("%s %s", kind, " ".join(f"{key}={value!r}" for key, value in fields.items()))


def require_url_elicitation(declared: ClientCapabilities | None) -> None:
    """-32021 naming URL-mode elicitation, unless the client declared it (MUST NOT send an undeclared mode)."""
    elicitation = declared.elicitation if declared is not None else None
    if elicitation is not None and elicitation.url is not None:
        return
    required = ClientCapabilities.model_validate({"elicitation": {"url": {}}})
    raise MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message="Client did not declare the elicitation capability (URL mode) this confirmation needs",
        data={"requiredCapabilities": required.model_dump(by_alias=True, mode="json", exclude_none=True)},
    )


class UrlGate:
    def __init__(self, book: Book, pages: PageServer, nonces: ledgers.Ledger, flaws: frozenset[str]) -> None:
        self._book, self._pages, self._nonces, self._flaws = book, pages, nonces, flaws

    async def __call__(self, order: Order, ctx: Context) -> str | InputRequiredResult:
        try:
            return await self._round(order, ctx)
        except Refused as exc:
            event("refused", reason=str(exc))
            raise ToolError(str(exc)) from None

    async def _round(self, order: Order, ctx: Context) -> str | InputRequiredResult:
        responses = ctx.input_responses
        if not responses:
            require_url_elicitation(ctx.client_capabilities)
            return await self._ask(order)
        response = responses.get(ANSWER_KEY)
        if not isinstance(response, ElicitResult):
            raise Refused(f"no elicitation result under {ANSWER_KEY!r}, the only question this server asked")
        if ctx.request_state is None:
            raise Refused("an answer arrived without the question's requestState; nothing was paid")
        nonce, approved, elicitation_id = _read(ctx.request_state)
        found = self._pages.store.get(elicitation_id)
        if found is None or approved != order or found.order != order:
            raise Refused("the payment is not the one the person was asked about")
        if response.action != "accept":
            await self._nonces.spend(nonce)
            self._pages.store.close(elicitation_id)
            event("not-confirmed", action=response.action)
            return f"No payment was sent: the person chose {response.action}."
        if "acts-on-accept" not in self._flaws:  # FLAW acts-on-accept: consent taken for completion
            while found.status == PENDING and not self._pages.store.expired(found):
                if "waits-forever" not in self._flaws:
                    # Not completed yet: ask again, the same page; the state is not spent.
                    event("still-waiting", elicitation=elicitation_id)
                    return self._question(found.id, ctx.request_state)
                await anyio.sleep(_POLL)  # FLAW waits-forever: no bound on the person
            if found.status != COMPLETED or not self._pages.store.consume(elicitation_id):
                raise Refused(_SPENT)
        if not await self._nonces.spend(nonce):
            raise Refused(_SPENT)
        payment = self._book.pay(order)
        event("paid", id=payment.id, amount_cents=payment.amount_cents)
        return f"Sent {payment.amount_cents} cents to {q.quoted(payment.recipient)} (payment {q.quoted(payment.id)})."

    async def _ask(self, order: Order) -> InputRequiredResult:
        question = q.payment_question(
            order.recipient, order.amount_cents, order.memo, raw="raw-page" in self._flaws
        )
        found = self._pages.store.start(order, self._pages.owner, question)
        nonce = secrets.token_urlsafe(16)
        await self._nonces.issue(nonce)
        state = json.dumps(
            {"nonce": nonce, "payment": order.fields(), "elicitation": found.id}, sort_keys=True
        )
        event("asked", amount_cents=order.amount_cents)
        return self._question(found.id, state)

    def _question(self, elicitation_id: str, state: str) -> InputRequiredResult:
        found = self._pages.store.get(elicitation_id)
        assert found is not None
        params = ElicitRequestURLParams(
            mode="url", message=MESSAGE, url=self._pages.url(found), elicitation_id=found.id
        )
        return InputRequiredResult(
            input_requests={ANSWER_KEY: ElicitRequest(params=params)}, request_state=state
        )


def _read(state: str) -> tuple[str, Order, str]:
    try:
        data = json.loads(state)
        payment = data["payment"]
        order = Order(str(payment["recipient"]), int(payment["amount_cents"]), str(payment["memo"]))
        return str(data["nonce"]), order, str(data["elicitation"])
    except (ValueError, KeyError, TypeError):
        raise Refused("malformed confirmation state") from None


def people_from(text: str) -> dict[str, str]:
    """`alice=TOKEN,bob=TOKEN` -> {alice: TOKEN, bob: TOKEN}, in order."""
    people: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, token = item.partition("=")
        if not name or len(token) < 8:
            raise ValueError("people are NAME=TOKEN pairs (tokens of 8 characters or more), comma-separated")
        people[name] = token
    return people


def build_server(
    root: str | Path,
    *,
    people: Mapping[str, str],
    flaws: Collection[str] = (),
    ttl_seconds: float = 300.0,
) -> MCPServer:
    active = url_flaws.check(flaws)
    if not Path(root).is_dir():
        raise ValueError(f"--root {str(root)!r} is not a directory")
    if not people:
        raise ValueError("name the people who may sign in to the pages (--people-env)")
    serving.configure_log(log, "mcp-url-mode-reference")
    book = Book()
    pages = PageServer(Store(ttl_seconds), dict(people), active)
    nonces = ledgers.Ledger(ledgers.open_backend("memory"), ttl_seconds)
    gate = UrlGate(book, pages, nonces, active)
    server = MCPServer(SERVER_NAME, request_state_security=RequestStateSecurity.ephemeral(ttl=ttl_seconds))

    async def send_payment(
        recipient: Annotated[str, Field(description="Who is paid.")],
        amount_cents: Annotated[int, Field(ge=1, description="The amount, in cents (at least 1).")],
        memo: Annotated[str, Field(description="A note that travels with the payment.")],
        ctx: Context,
    ) -> str | InputRequiredResult:
        return await gate(Order(recipient, amount_cents, memo), ctx)

    def list_payments() -> Payments:
        return Payments(payments=[PaymentOut.model_validate(p.as_json()) for p in book.payments])

    server.add_tool(
        send_payment,
        name="send_payment",
        description="Send a payment. The person approves it on a page of this server first.",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False),
    )
    server.add_tool(
        list_payments,
        name="list_payments",
        description="Every payment sent.",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )
    return server


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", required=True, metavar="DIR")
    parser.add_argument("--people-env", required=True, metavar="NAME", help="env var: NAME=TOKEN,NAME=TOKEN")
    parser.add_argument("--ttl-seconds", type=float, default=300.0, metavar="N")
    names = sorted(url_flaws.FLAWS)
    parser.add_argument(
        "--flaw", action="append", default=[], choices=names, metavar="NAME", help=f"one of {names}"
    )
    args = parser.parse_args(argv)
    try:
        people = people_from(os.environ.get(args.people_env, ""))
        server = build_server(args.root, people=people, flaws=args.flaw, ttl_seconds=args.ttl_seconds)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    server.run(transport="stdio")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
