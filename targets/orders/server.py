"""Reference server whose confirmed action names no file and is asked over a flow: an order desk.

    python targets/orders/server.py --root DIR --mechanism token|pending|terminal
        [--style json|code-points] [--flaw raw-order-id] [--refuses CHARS] [--ttl SECONDS] [--inbox DIR]

`cancel_order(order_id)` cancels an order of the shop the desk fronts. The
desk takes the reference as the shop gives it (it keeps no orders of its own),
so the only thing between a hostile reference and the person is how the
question shows it. The effect is seen only through the read-only
`list_cancellations`:
- token: `dry_run: true` previews and returns a `confirm_token`, bound to the
  order and spent once; the call that carries it cancels.
- pending: the call stages the cancellation and returns a `pending_id`; only
  the human's decision (targets/confirm_kinds/approve_cli.py, writing into
  `--inbox`) lets `execute_pending` cancel.
- terminal: the call asks `Approve cancelling order ...? allow? [y/N]` on the
  server's terminal and cancels on `y`; with no terminal or no answer in --ttl, it refuses.
The gates are the confirm-kinds server's (targets/confirm_kinds/gates.py).

What the person reads names the order, in one of two careful styles:
- `json` (the default): the preview is a JSON document, every character outside
  printable ASCII escaped; the terminal quotes the reference as a JSON string.
- `code-points`: plain sentences; a reference with anything but letters, digits,
  space and `._/-` is written as the list of its code points (`\\u{5b}\\u{43}...`),
  so nothing in it is rendered, and it is still read exactly.
`--flaw raw-order-id` puts the reference into the sentence as it is. With `--refuses CHARS` (token,
pending) a reference holding any of CHARS is refused before anything is previewed or staged, in an
ordinary result that quotes it as it is and carries a `request_id`: nobody was asked about it.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import sys
import threading
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Annotated, Any

_HERE = Path(__file__).resolve().parent
for _path in (str(_HERE.parent / "confirm_kinds"), str(_HERE.parent / "elsewhere")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import gates  # noqa: E402
from ask_terminal import ask_terminal  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402
from pydantic import Field  # noqa: E402

__all__ = ["FLAWS", "MECHANISMS", "STYLES", "build_server", "main"]

MECHANISMS = ("token", "pending", "terminal")
STYLES = ("json", "code-points")
FLAWS = {"raw-order-id": "the order reference goes into the question's sentence as it is"}
OrderId = Annotated[str, Field(description="The shop's order reference.", examples=["ORD-1042"])]
_CANCELS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
_PLAIN = re.compile(r"[A-Za-z0-9 ._/-]+")


class Shown:
    """How the desk writes an order reference into what the person reads."""

    def __init__(self, style: str, raw: bool, refuses: str = "") -> None:
        self.style, self.raw, self.refuses = style, raw, refuses

    def refused(self, order_id: str) -> str | None:
        """The refusal of a reference this desk never takes, before any preview; None if it takes it."""
        if not any(ch in self.refuses for ch in order_id):
            return None
        said = {"status": "refused", "error": f"not an order reference: {order_id}"}
        return json.dumps({**said, "request_id": secrets.token_hex(6)}, ensure_ascii=False)

    def reference(self, order_id: str) -> str:
        if self.raw:
            return order_id  # FLAW raw-order-id
        if self.style == "json":
            return json.dumps(order_id, ensure_ascii=True)
        if _PLAIN.fullmatch(order_id):
            return order_id
        return "(code points) " + "".join(f"\\u{{{ord(ch):x}}}" for ch in order_id)

    def preview(self, fields: dict[str, Any], sentence: str) -> str:
        """The preview's text: a JSON document (json), or sentences and its fields, one a line."""
        if self.style == "json" and not self.raw:
            return json.dumps(fields, ensure_ascii=True)
        rest = (f"{k}: {v}" for k, v in fields.items() if k != "order_id")
        return "\n".join([sentence, *rest])


class Desk:
    """The cancellations made, as `list_cancellations` shows them."""

    def __init__(self) -> None:
        self.cancelled: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def cancel(self, order_id: str) -> dict[str, Any]:
        with self._lock:
            made = {"cancellation": len(self.cancelled) + 1, "order_id": order_id}
            self.cancelled.append(made)
        return {"cancelled": made}


def build_server(
    root: str | Path,
    *,
    mechanism: str = "token",
    style: str = "json",
    flaws: Collection[str] = (),
    inbox: str | None = None,
    ttl: float = 30.0,
    refuses: str = "",
) -> MCPServer:
    if mechanism not in MECHANISMS or style not in STYLES:
        raise ValueError(f"--mechanism is one of {MECHANISMS}, --style one of {STYLES}")
    if unknown := sorted(set(flaws) - FLAWS.keys()):
        raise ValueError(f"unknown flaw(s) {unknown}: the desk has {', '.join(FLAWS)}")
    if refuses and mechanism == "terminal":
        raise ValueError("--refuses shapes a preview: use it with --mechanism token or pending")
    shown = Shown(style, "raw-order-id" in flaws, refuses)
    desk = Desk()
    server = MCPServer(f"order-desk-{mechanism}")
    if mechanism == "token":
        _token_tool(server, gates.TokenStore(frozenset()), desk, shown)
    elif mechanism == "pending":
        where = Path(inbox) if inbox else Path(root).resolve().parent / "approvals"
        _pending_tools(server, gates.PendingStore(where), desk, shown)
    else:

        def cancel_order(order_id: OrderId) -> dict[str, Any]:
            """Cancel one order once the person at the desk's terminal says y."""
            answer = ask_terminal(f"Approve cancelling order {shown.reference(order_id)}? allow? [y/N] ", ttl)
            if not answer:
                raise ToolError("refused: the person at the terminal did not approve")
            return desk.cancel(order_id)

        server.add_tool(cancel_order, name="cancel_order", annotations=_CANCELS)

    def list_cancellations() -> dict[str, Any]:
        """Every cancellation the desk made."""
        return {"cancellations": list(desk.cancelled)}

    server.add_tool(
        list_cancellations, name="list_cancellations", annotations=ToolAnnotations(read_only_hint=True)
    )
    return server


# The tools return Any, not str: the SDK would wrap a str in structuredContent {"result": ...}, and a
# refusal written as JSON text is read from the text only when no structured content stands first.


def _token_tool(server: MCPServer, store: gates.TokenStore, desk: Desk, shown: Shown) -> None:
    def cancel_order(order_id: OrderId, dry_run: bool = False, confirm_token: str | None = None) -> Any:
        """Cancel one order. Preview with dry_run: true, then confirm with the confirm_token it returns."""
        if (refused := shown.refused(order_id)) is not None:
            return refused
        if dry_run:
            token = store.issue("cancel_order", {"order_id": order_id})
            fields = {"status": "preview", "would": "cancel", "order_id": order_id, "confirm_token": token}
            return shown.preview(fields, f"Preview: would cancel order {shown.reference(order_id)}.")
        if confirm_token is None:
            raise ToolError(
                "confirmation required: call with dry_run: true, then again with its confirm_token"
            )
        try:
            store.redeem(confirm_token, "cancel_order", {"order_id": order_id})
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None
        return json.dumps(desk.cancel(order_id))

    server.add_tool(cancel_order, name="cancel_order", annotations=_CANCELS)


def _pending_tools(server: MCPServer, store: gates.PendingStore, desk: Desk, shown: Shown) -> None:
    def cancel_order(order_id: OrderId) -> Any:
        """Stage cancelling one order; a human approves it, then execute_pending cancels."""
        if (refused := shown.refused(order_id)) is not None:
            return refused
        pending_id = store.stage("cancel_order", order_id)
        fields = {
            "status": "pending_approval",
            "pending_id": pending_id,
            "order_id": order_id,
            "message": "Awaiting your approval.",
        }
        return shown.preview(
            fields, f"Staged: cancel order {shown.reference(order_id)}. Awaiting your approval."
        )

    def execute_pending(pending_id: str) -> str:
        try:
            _, order_id = store.release(pending_id)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None
        return json.dumps(desk.cancel(order_id))

    server.add_tool(cancel_order, name="cancel_order", annotations=_CANCELS)
    server.add_tool(execute_pending, name="execute_pending", annotations=_CANCELS)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", required=True, metavar="DIR")
    parser.add_argument("--mechanism", default="token", choices=MECHANISMS)
    parser.add_argument("--style", default="json", choices=STYLES, help="how the order is shown")
    parser.add_argument("--inbox", metavar="DIR", help="pending: where the human's decisions are written")
    parser.add_argument("--ttl", type=float, default=30.0, help="terminal: seconds to wait for an answer")
    parser.add_argument("--flaw", action="append", default=[], choices=sorted(FLAWS), metavar="NAME")
    parser.add_argument(
        "--refuses", default="", metavar="CHARS", help="refuse references holding any of these"
    )
    args = parser.parse_args(argv)
    try:
        server = build_server(
            args.root,
            mechanism=args.mechanism,
            style=args.style,
            flaws=args.flaw,
            inbox=args.inbox,
            ttl=args.ttl,
            refuses=args.refuses,
        )
    except ValueError as exc:
        parser.error(str(exc))
    server.run(transport="stdio")


if __name__ == "__main__":
    main()
