"""The staging half of a two-server gate: it stages invoices, and never posts one.

    python targets/staging/stage_server.py --root DIR [--codes] [--edits open|locked]

`stage_invoice(vendor, amount_cents)` writes the invoice under ROOT/staged and
returns its `invoice_id` with `status: pending_approval`; `list_staged` shows them.
A person approves an invoice with `approve_cli.py ROOT ID` (what they read is
what is staged); the post server (post_server.py) posts it. With `--codes` the
stage server prints an approval code for each staged invoice on its console
(stderr: `approval code for inv_...: 123456`), never in a result: the person reads
it there and gives it to the post server's approval route.

With `--edits open` it also offers `edit_invoice(invoice_id, vendor, amount_cents)`,
which changes a staged invoice's business fields, approved or not (the post server's
digest of what the person approved is what then keeps it safe); with `--edits locked`
the same tool refuses an invoice a person has decided on, as a ledger that freezes
what was approved does.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from staging_store import Refused, Store


def build_server(root: str | Path, codes: bool = False, edits: str | None = None) -> MCPServer:
    store = Store(root)
    server = MCPServer("mcp-staging-stage")

    def stage_invoice(
        vendor: Annotated[str, Field(description="Who the invoice pays.")],
        amount_cents: Annotated[int, Field(ge=1, description="The amount, in cents.")],
    ) -> dict[str, Any]:
        invoice = store.stage(vendor, amount_cents)
        if codes:
            code = store.new_code(invoice["invoice_id"])
            print(f"approval code for {invoice['invoice_id']}: {code}", file=sys.stderr, flush=True)
        # The vendor as the approver's CLI shows it to the person: JSON-escaped, every character
        # outside printable ASCII as its code point, so nothing in it renders as a line or a mark.
        shown = json.dumps(invoice["vendor"])[1:-1]
        return {**invoice, "vendor": shown, "status": "pending_approval"}

    def edit_invoice(
        invoice_id: Annotated[str, Field(description="The id stage_invoice returned.")],
        vendor: Annotated[str | None, Field(description="Who the invoice pays now.")] = None,
        amount_cents: Annotated[int | None, Field(ge=1, description="The amount now, in cents.")] = None,
    ) -> dict[str, Any]:
        try:
            if edits == "locked" and store.decision(invoice_id) is not None:
                raise Refused(f"invoice {invoice_id} was decided on by a person: it can no longer be changed")
            invoice = store.edit(invoice_id, vendor, amount_cents)
        except Refused as exc:
            raise ToolError(str(exc)) from None
        return {**invoice, "status": "edited"}

    def list_staged() -> dict[str, Any]:
        return {"staged": store.staged_all()}

    server.add_tool(
        stage_invoice,
        name="stage_invoice",
        description="Stage an invoice for posting; a person approves it with the approver's CLI.",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False),
    )
    if edits is not None:
        server.add_tool(
            edit_invoice,
            name="edit_invoice",
            description="Change a staged invoice's vendor or amount.",
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
        )
    server.add_tool(
        list_staged,
        name="list_staged",
        description="Every staged invoice.",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )
    return server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", required=True, metavar="DIR")
    parser.add_argument("--codes", action="store_true", help="print an approval code per invoice on stderr")
    parser.add_argument("--edits", choices=("open", "locked"), help="offer edit_invoice (see above)")
    args = parser.parse_args()
    build_server(args.root, codes=args.codes, edits=args.edits).run(transport="stdio")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
