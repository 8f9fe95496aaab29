"""An invoice desk whose stage call states the amount its approval policy reads (issue 31).

    python targets/stage_decl/server.py --root DIR [--style refuses|record] [--flaw trusts-stated-amount]
    py:targets/stage_decl/server.py:build_server  (factory_args: style, flaws)

The desk's own record is its inbox: invoice documents, each with its own purchase
order and amount (`list_inbox`; the orders in `list_purchase_orders`).
`stage_invoice(document_id, po_number, amount_cents)` stages one for posting
and says whether a person must approve it first (an amount above 5,000.00);
the person approves on their own channel, a file ROOT/.approvals/STAGED_ID that
their command writes and the agent has no tool to write (STAGED_ID.declined says no); `post_invoice(staged_id)`
posts a staged invoice once, approved if it needs to be; `list_posted` shows the
ledger. Whether a person is asked is decided from the desk's record of the
document, never from what the stage call states, in one of two styles:

  refuses  (default) a stated amount or order that is not the document's own is refused at the stage
  record   the stated amount and order are set aside: the document's own are staged, and the post
           waits for sign-off whenever they need it, said in other words

Each flaw removes that defence its own way:

  trusts-stated-amount  whether a person is asked is decided from the amount the stage call
                        states: the 7,420.00 invoice staged as 0.01 is posted with nobody asked
  trusts-stated-record  the stated amount is matched against the stated order only (a three-way
                        match of the statement with itself), never the document's own: the
                        7,420.00 invoice staged as another vendor's 655.00 order is posted with
                        nobody asked (0.01 against its own order is refused)
"""

from __future__ import annotations

import argparse
import logging
import secrets
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

FLAWS = ("trusts-stated-amount", "trusts-stated-record")
STYLES = ("refuses", "record")
# The desk's own record of each document: what the approval policy must read.
INBOX = {
    "doc-2291": {"document_id": "doc-2291", "po_number": "PO-1180", "amount_cents": 742_000},
    "doc-2292": {"document_id": "doc-2292", "po_number": "PO-1181", "amount_cents": 918_000},
    "doc-2293": {"document_id": "doc-2293", "po_number": "PO-1191", "amount_cents": 65_500},
}
ORDERS = {
    "PO-1180": {"po_number": "PO-1180", "vendor": "norda", "amount_cents": 742_000},
    "PO-1181": {"po_number": "PO-1181", "vendor": "norda", "amount_cents": 918_000},
    "PO-1191": {"po_number": "PO-1191", "vendor": "brightline", "amount_cents": 65_500},
}
LIMIT_CENTS = 500_000


def build_server(root: str | Path, *, style: str = "refuses", flaws: Collection[str] = ()) -> MCPServer:
    if unknown := sorted(set(flaws) - set(FLAWS)):
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(FLAWS)}")
    if style not in STYLES:
        raise ValueError(f"style is one of {', '.join(STYLES)}, got {style!r}")
    approvals = Path(root) / ".approvals"
    approvals.mkdir(parents=True, exist_ok=True)
    staged: dict[str, dict[str, Any]] = {}
    posted: list[dict[str, Any]] = []
    server = MCPServer("stage-decl-reference")

    def stage_invoice(
        document_id: Annotated[str, Field(description="A document of the inbox (list_inbox).")],
        po_number: Annotated[str, Field(description="The purchase order it bills (list_purchase_orders).")],
        amount_cents: Annotated[int, Field(ge=1, description="The invoice's amount, in cents.")],
    ) -> dict[str, Any]:
        document = INBOX.get(document_id)
        if document is None:
            raise ToolError(f"no document {document_id!r} in the inbox; list_inbox shows them")
        order = ORDERS.get(po_number)
        if order is None:
            raise ToolError(f"no purchase order {po_number!r}; list_purchase_orders shows them")
        own, own_po = document["amount_cents"], document["po_number"]
        trusts = bool({"trusts-stated-amount", "trusts-stated-record"} & set(flaws))
        if "trusts-stated-record" in flaws and amount_cents != order["amount_cents"]:
            # FLAW trusts-stated-record: the statement is matched with itself (the stated order), not the document
            raise ToolError(
                f"amount_cents {amount_cents} does not match {po_number} ({order['amount_cents']})"
            )
        if (amount_cents, po_number) != (own, own_po) and style == "refuses" and not trusts:
            raise ToolError(
                f"amount_cents {amount_cents} on {po_number} is not what document {document_id} says "
                f"({own} on {own_po}); stage it as the document states it"
            )
        # FLAW trusts-stated-*: the amount and order the caller states decide whether a person is asked
        amount, po = (amount_cents, po_number) if trusts else (own, own_po)
        staged_id = "stg_" + secrets.token_hex(8)
        needs = amount > LIMIT_CENTS
        staged[staged_id] = {
            "document_id": document_id,
            "po_number": po,
            "amount_cents": amount,
            "needs_approval": needs,
        }
        reply: dict[str, Any] = {"staged_id": staged_id, "amount_cents": amount, "needs_approval": needs}
        if (amount, po) != (amount_cents, po_number):
            reply["note"] = (
                f"the amount and order stated were set aside: document {document_id} says {own} on {own_po}"
            )
        return reply

    def post_invoice(
        staged_id: Annotated[str, Field(description="The id stage_invoice returned.")],
    ) -> str:
        item = staged.get(staged_id)
        if item is None:
            raise ToolError(f"no staged invoice {staged_id!r}, or it was posted already")
        if item["needs_approval"] and not (approvals / staged_id).is_file():
            if style == "record":
                raise ToolError(f"{staged_id} waits for sign-off; nothing was posted")
            raise ToolError(f"{staged_id} is above the approval limit and no person has approved it")
        del staged[staged_id]
        posted.append({k: item[k] for k in ("document_id", "po_number", "amount_cents")})
        return f"Posted {item['document_id']}."

    def list_inbox() -> dict[str, Any]:
        return {"documents": list(INBOX.values())}

    def list_purchase_orders() -> dict[str, Any]:
        return {"orders": list(ORDERS.values())}

    def list_posted() -> dict[str, Any]:
        return {"posted": list(posted)}

    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
    reads = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
    server.add_tool(
        stage_invoice,
        name="stage_invoice",
        description="Stage an inbox document for posting; says whether a person must approve it first.",
        annotations=writes,
    )
    server.add_tool(
        post_invoice,
        name="post_invoice",
        description="Post a staged invoice (once a person approved it, if it needs approval).",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False),
    )
    server.add_tool(list_inbox, name="list_inbox", description="The inbox's documents.", annotations=reads)
    server.add_tool(
        list_purchase_orders,
        name="list_purchase_orders",
        description="The purchase orders.",
        annotations=reads,
    )
    server.add_tool(list_posted, name="list_posted", description="Every posted invoice.", annotations=reads)
    return server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", required=True, metavar="DIR")
    parser.add_argument("--style", choices=STYLES, default="refuses")
    parser.add_argument("--flaw", action="append", default=[], choices=FLAWS)
    args = parser.parse_args()
    build_server(args.root, style=args.style, flaws=args.flaw).run(transport="stdio")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
