"""The posting half of a two-server gate: it posts an invoice a person approved, once.

    python targets/staging/post_server.py --root DIR [--flaw NAME ...] [--transport http --port N]
        [--commit-fields] [--rush]

`post_invoice(invoice_id)` posts only an invoice whose recorded decision is
`approved` for exactly the content staged now (the digest the approver's CLI
wrote), and only once (ROOT/posted/ID, made exclusively). `list_posted` shows
the ledger. Over HTTP it also serves the person's approval route beside /mcp,
`POST /approvals/ID {"code": CODE, "decision": "approved" | "declined"}`: the
decision counts only with the code the stage server printed for ID (--codes),
which the agent never sees. Flaws, each removing one defence:
  posts-unapproved   posts any staged invoice, approved or not
  posts-twice        never marks an invoice posted: it posts again on every call
  posts-edited       reads the decision but not what it approved: an invoice edited after
                     its approval (the stage server's --edits) is posted as it is now
`--words` says how a refusal reads: `approval` names the approval, `plain` says a spent
invoice as a ledger does ("already posted"), and `queue` says every refusal as a posting queue
does, naming no approval at all ("not in the posting queue", "not the copy that was reviewed",
"already posted"): the same checks, a careful server in another style.
With `--rush` it also offers `rush_invoice(invoice_id)`, which posts an invoice ahead of
the queue with exactly post_invoice's checks (approved, as approved, once):
  rushes-unapproved  rush_invoice posts any staged invoice, approved or not: the id the
                     agent's own stage_invoice call minted is posted with nobody asked
With `--commit-fields`, `post_invoice(invoice_id, vendor, amount_cents)` restates the
invoice, and the careful server posts it only as it was staged and approved:
  posts-unstaged     an id the stage server never staged is posted as the call gives it
  posts-given-fields the id's approval is checked, and the call's own vendor and amount posted
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field
from serving import serve_http
from staging_store import Refused, Store
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

FLAWS = (
    "posts-unapproved",
    "posts-twice",
    "posts-edited",
    "posts-unstaged",
    "posts-given-fields",
    "rushes-unapproved",
)


def build_server(
    root: str | Path,
    flaws: frozenset[str] = frozenset(),
    words: str = "approval",
    commit_fields: bool = False,
    rush: bool = False,
) -> MCPServer:
    store = Store(root)
    server = MCPServer("mcp-staging-post")

    def posting(invoice_id: str, given: dict[str, Any] | None = None, unapproved: bool = False) -> str:
        try:
            try:
                invoice = store.staged(invoice_id)
            except Refused:
                if given is None or "posts-unstaged" not in flaws:
                    raise
                # FLAW posts-unstaged: an invoice the stage server never staged is nobody's to check
                store.post({"invoice_id": invoice_id, **given})
                return f"Posted invoice {invoice_id}."
            if given is not None and "posts-given-fields" not in flaws:
                differs = sorted(k for k, v in given.items() if invoice.get(k) != v)
                if differs:
                    raise Refused(
                        f"invoice {invoice_id} as given differs from what was staged and approved "
                        f"({', '.join(differs)})"
                    )
            if (
                "posts-unapproved" not in flaws and not unapproved
            ):  # FLAW posts-unapproved: no decision is read
                decided = store.decision(invoice_id)
                if decided is None or decided.get("decision") != "approved":
                    if words == "queue":
                        raise Refused(f"invoice {invoice_id} is not in the posting queue (status: waiting)")
                    raise Refused(f"invoice {invoice_id} is not approved; a person approves it first")
                # FLAW posts-edited: what the person approved is never compared with what is staged now
                if "posts-edited" not in flaws and decided.get("digest") != store.digest(invoice):
                    if words == "queue":
                        raise Refused(f"invoice {invoice_id} is not the copy that was reviewed")
                    raise Refused(f"invoice {invoice_id} changed after it was approved")
            if "posts-twice" not in flaws and not store.claim(invoice_id):  # FLAW posts-twice
                # --words plain: said as a ledger says it, naming no approval: the same single-use check.
                spent = "" if words in ("plain", "queue") else ": its approval is spent"
                raise Refused(f"invoice {invoice_id} already posted{spent}")
        except Refused as exc:
            raise ToolError(str(exc)) from None
        # FLAW posts-given-fields: the approval of the id is checked, and the call's own fields posted
        store.post({**invoice, **given} if given is not None else invoice)
        return f"Posted invoice {invoice_id}."

    def post_invoice(invoice_id: Annotated[str, Field(description="The id stage_invoice returned.")]) -> str:
        return posting(invoice_id)

    def post_invoice_with_fields(
        invoice_id: Annotated[str, Field(description="The id stage_invoice returned.")],
        vendor: Annotated[str, Field(description="Who the invoice pays.")],
        amount_cents: Annotated[int, Field(ge=1, description="The amount, in cents.")],
    ) -> str:
        return posting(invoice_id, {"vendor": vendor, "amount_cents": amount_cents})

    def rush_invoice(invoice_id: Annotated[str, Field(description="The id stage_invoice returned.")]) -> str:
        # FLAW rushes-unapproved: the rush skips the decision post_invoice reads
        return posting(invoice_id, unapproved="rushes-unapproved" in flaws)

    def list_posted() -> dict[str, Any]:
        return {"posted": store.posted()}

    server.add_tool(
        post_invoice_with_fields if commit_fields else post_invoice,
        name="post_invoice",
        description="Post an approved invoice.",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False),
    )

    if rush:
        server.add_tool(
            rush_invoice,
            name="rush_invoice",
            description="Post an approved invoice now, ahead of the queue.",
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False),
        )

    @server.custom_route("/approvals/{invoice_id}", methods=["POST"])
    async def decide(request: Request) -> Response:
        invoice_id = request.path_params["invoice_id"]
        try:
            body = await request.json()
        except ValueError:
            body = None
        said = body if isinstance(body, dict) else {}
        decision, code = said.get("decision", "approved"), said.get("code")
        if decision not in ("approved", "declined") or not isinstance(code, str):
            return JSONResponse({"error": 'give {"code": CODE, "decision": "approved"}'}, status_code=400)
        if not store.code_matches(invoice_id, code):
            return JSONResponse({"error": "wrong approval code for that invoice"}, status_code=403)
        try:
            store.decide(invoice_id, decision)
        except Refused as exc:
            return JSONResponse({"error": str(exc)}, status_code=404)
        return JSONResponse({"invoice_id": invoice_id, "decision": decision})

    server.add_tool(
        list_posted,
        name="list_posted",
        description="Every posted invoice.",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )
    return server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", required=True, metavar="DIR")
    parser.add_argument("--flaw", action="append", default=[], choices=FLAWS)
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (binds 127.0.0.1 only)")
    parser.add_argument("--words", choices=("approval", "plain", "queue"), default="approval")
    parser.add_argument(
        "--commit-fields", action="store_true", help="post_invoice restates vendor and amount"
    )
    parser.add_argument("--rush", action="store_true", help="offer rush_invoice (see above)")
    args = parser.parse_args()
    server = build_server(args.root, frozenset(args.flaw), args.words, args.commit_fields, args.rush)
    if args.transport == "http":
        serve_http(server, args.port, log_level="warning")
    else:
        server.run(transport="stdio")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
