"""Reference server whose confirmed action removes a row of a JSON store it keeps in its root: a stock list.

    python targets/inventory/server.py --root DIR [--flaw NAME ...]

The shape of an inventory API fronted by an MCP server (stocktrim-mcp-server's):
ROOT/inventory.json holds {"items": [...], "next_id": N}, written when the server
starts, before any call. `delete_item(sku)` asks over `elicitation/create` with a
form that has no field at all, the accept being the person's yes (what FastMCP's
`ctx.elicit(message, response_type=None)` sends), and removes that item's row. It asks only a
client that declared form elicitation, and a question unanswered for five seconds is a no.
`save_item(sku, name)` asks the same way before it adds the item, or renames it
when the sku is already there (an upsert, as such an API's POST is). No tool lists the
items: the file is the only place the effect shows. A 2025-11-25 (or 2025-06-18) connection only: this server speaks no MRTR.

The store is one file: whoever reads it whole sees every call that changed it as "the file rewritten", a deletion and a
rename alike. Row by row they differ.

`audit_log` (--audit-log), a careful style of its own: every call that reaches the store
appends a line to ROOT/audit.jsonl (there from the start), a failed one too, as
sendgrid-mcp-secure's audit log does; a question declined writes nothing. The log is the
server's bookkeeping, never the gated deletion's effect.

`notes` (--notes), another careful style: an `add_note(sku, text)` tool writes a note about an item,
unasked, under the store's own "notes" key (the shape of finamatik-ops-mcp's add_note, which writes
another table of the database its gated create_order writes). The file is rewritten, but no item
changes: a note is no deletion, nor anywhere the deletion shows.

Flaws (each removes one defence):
  save-unasked   save_item adds or renames without asking: another change of the
                 store than the gated deletion (ungated: weak)
  clear-unasked  a clear_items tool empties the store without asking: the gated
                 deletion done around the gate (ungated: vulnerable)
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

FLAWS: dict[str, str] = {
    "save-unasked": "save_item adds or renames an item without asking the person",
    "clear-unasked": "a clear_items tool empties the store without asking the person",
}
STORE = "inventory.json"
SEED = [
    {"id": 1, "sku": "WIDGET-001", "name": "Blue widget"},
    {"id": 2, "sku": "GADGET-002", "name": "Red gadget"},
    {"id": 3, "sku": "SPROCKET-003", "name": "Green sprocket"},
]
# The form of a confirmation sent with no response type: an object that asks nothing.
NO_FIELDS: dict[str, Any] = {"type": "object", "properties": {}}
# How long a question waits for the person before it is a no.
ANSWER_SECONDS = 5.0


class Store:
    def __init__(self, root: Path) -> None:
        self.path = root / STORE
        if not self.path.exists():
            self.save({"items": [dict(item) for item in SEED], "next_id": len(SEED) + 1})

    def load(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        return data

    def save(self, data: dict[str, Any]) -> None:
        self.path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    def find(self, sku: str) -> dict[str, Any] | None:
        return next((item for item in self.load()["items"] if item["sku"] == sku), None)


async def _person_says_yes(ctx: Context, message: str) -> bool:
    """Ask over the back channel; the action alone decides (the form has nothing to fill in).

    Only a client that declared form elicitation is asked, and an unanswered question is a no after
    ANSWER_SECONDS.
    """
    elicitation = getattr(ctx.client_capabilities, "elicitation", None)
    if elicitation is None or (elicitation.form is None and elicitation.url is not None):
        raise ToolError(
            "this client cannot show the person a form (no elicitation declared): nothing changed"
        )
    session = ctx.request_context.session
    try:
        with anyio.fail_after(ANSWER_SECONDS):
            result = await session.elicit_form(message, NO_FIELDS, related_request_id=ctx.request_id)
    except TimeoutError:
        return False
    return result.action == "accept"


class Log:
    """--audit-log: one JSON line per call that reached the store, appended; none without the option."""

    def __init__(self, root: Path, kept: bool) -> None:
        self.path = root / "audit.jsonl" if kept else None
        if self.path is not None and not self.path.exists():
            self.path.write_text("", encoding="utf-8")

    def __call__(self, tool: str, sku: str, outcome: str) -> None:
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"tool": tool, "sku": sku, "outcome": outcome}) + "\n")


def build_server(
    root: str | Path, *, flaws: Sequence[str] = (), audit_log: bool = False, notes: bool = False
) -> MCPServer:
    active = frozenset(flaws)
    unknown = sorted(active - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    store = Store(Path(root))
    audit = Log(Path(root), audit_log)
    server = MCPServer("mcp-confirm-inventory-reference")

    @server.tool(annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False))
    async def delete_item(sku: str, ctx: Context) -> str:
        """Delete one item from the stock list, after asking the person."""
        item = store.find(sku)
        if item is None:
            audit("delete_item", sku, "failed: no such item")
            raise ToolError(f"no item {json.dumps(sku)}")
        shown = f"Delete item {json.dumps(item['sku'])} ({json.dumps(item['name'])}) for good?"
        if not await _person_says_yes(ctx, shown):
            return "not deleted: the person did not accept"
        data = store.load()
        if item not in data["items"]:
            raise ToolError("the item changed after the question; nothing was deleted, ask again")
        data["items"].remove(item)
        store.save(data)
        audit("delete_item", sku, "deleted")
        return f"deleted {item['sku']}"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False))
    async def save_item(sku: str, name: str, ctx: Context) -> str:
        """Add an item to the stock list, or rename the one with this sku (asking the person first)."""
        asked = f"Save item {json.dumps(sku)} as {json.dumps(name)}?"
        if "save-unasked" not in active and not await _person_says_yes(ctx, asked):
            return "not saved: the person did not accept"
        data = store.load()  # FLAW save-unasked: reached without a question
        item = next((i for i in data["items"] if i["sku"] == sku), None)
        if item is None:
            data["items"].append({"id": data["next_id"], "sku": sku, "name": name})
            data["next_id"] += 1
        else:
            item["name"] = name
        store.save(data)
        audit("save_item", sku, "saved")
        return f"saved {sku}"

    if notes:

        @server.tool(annotations=ToolAnnotations(readOnlyHint=False))
        def add_note(sku: str, text: str) -> str:
            """Write a note about an item (the items themselves are left as they are)."""
            data = store.load()
            data.setdefault("notes", []).append({"sku": sku, "text": text})
            store.save(data)
            audit("add_note", sku, "noted")
            return f"noted {sku}"

    if "clear-unasked" in active:

        @server.tool(annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False))
        def clear_items() -> str:
            """Empty the stock list."""
            data = store.load()  # FLAW clear-unasked: the deletion, all of it, never asked about
            data["items"] = []
            store.save(data)
            audit("clear_items", "*", "cleared")
            return "cleared"

    return server


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--root", default=os.environ.get("MCP_AUDIT_ROOT"), required="MCP_AUDIT_ROOT" not in os.environ
    )
    parser.add_argument("--flaw", action="append", default=[], choices=sorted(FLAWS), metavar="NAME")
    parser.add_argument("--audit-log", action="store_true", help="append every call to ROOT/audit.jsonl")
    parser.add_argument("--notes", action="store_true", help="an add_note tool writes notes into the store")
    args = parser.parse_args(argv)
    try:
        server = build_server(args.root, flaws=args.flaw, audit_log=args.audit_log, notes=args.notes)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    server.run(transport="stdio")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
