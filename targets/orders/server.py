"""Reference server whose confirmed action names no file and is asked over a flow: an order desk.

    python targets/orders/server.py --root DIR --mechanism token|pending|terminal|ask
        [--style json|code-points] [--flaw raw-order-id|lapse-approves|approval-outlives-ttl]
        [--refuses CHARS] [--ttl SECONDS]
        [--inbox DIR]
        [--command] [--returns text|str|object]

`cancel_order(order_id)` cancels an order of the shop the desk fronts. The
desk takes the reference as the shop gives it (it keeps no orders of its own),
so the only thing between a hostile reference and the person is how the
question shows it. The effect is seen only through the read-only
`list_cancellations`:
- token: `dry_run: true` previews and returns a `confirm_token`, bound to the
  order and spent once; the call that carries it cancels.
- pending: the call stages the cancellation and returns a `pending_id`; only
  the human's decision (targets/confirm_kinds/approve_cli.py, writing into
  `--inbox`) lets `execute_pending` cancel. With --ttl the staged request has a
  lifetime: past it, `execute_pending` refuses it, approved or not (without --ttl
  it waits for the person's decision however long it takes).
- terminal: the call asks `Approve cancelling order ...? allow? [y/N]` on the
  server's terminal and cancels on `y`; with no terminal or no answer in --ttl, it refuses.
- ask: the call asks the person itself, over MRTR or `elicitation/create` (shop_command.py).
The gates are the confirm-kinds server's (targets/confirm_kinds/gates.py).

`--command` (token, ask) makes the tool `shop(command)`, a command line that must read
`shop cancel <order reference>`; anything else is refused before anything is asked, in an
ordinary result, as a CLI wrapper refuses what its parser does not know (shop_command.py).

What the person reads names the order, in one of two careful styles:
- `json` (the default): the preview is a JSON document, every character outside
  printable ASCII escaped; a sentence (the terminal's, the question's) quotes the reference
  as an HTML-safe JSON string (`<>&[]` and `:/` escaped too).
- `code-points`: plain sentences; a reference with anything but letters, digits,
  space and `._/-` is written as the list of its code points (`\\u{5b}\\u{43}...`),
  so nothing in it is rendered, and it is still read exactly.
`--flaw raw-order-id` puts the reference into the sentence as it is. `--flaw lapse-approves` (pending)
carries out, at `execute_pending`, a staged cancellation whose --ttl passed with no approval, declined
or never answered: a desk that fails open at the lapse. `--flaw approval-outlives-ttl` (pending)
carries out an approved cancellation whose --ttl passed: the approval never goes stale. With
`--refuses CHARS` (token, pending, ask) a reference holding any of CHARS is refused before anything is previewed, staged or
asked, in an ordinary result that quotes it as it is and carries a `request_id`: nobody was asked about it.
`--returns` says how that refusal comes back: `text` (the default) a JSON document as the result's
text, `object` the same as a dict (structured content), `str` as JSON text from a tool typed `-> str`,
which the SDK wraps as structured content `{"result": "<the JSON text>"}`.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import secrets
import sys
import threading
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Annotated, Any

_HERE = Path(__file__).resolve().parent
for _path in (str(_HERE), str(_HERE.parent / "confirm_kinds"), str(_HERE.parent / "elsewhere")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import gates  # noqa: E402
from ask_terminal import ask_terminal  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402
from pydantic import Field  # noqa: E402
from shop_command import ShopCommand, ask_then, not_a_command, order_of  # noqa: E402

__all__ = ["FLAWS", "MECHANISMS", "STYLES", "build_server", "main"]

MECHANISMS = ("token", "pending", "terminal", "ask")
STYLES = ("json", "code-points")
RETURNS = ("text", "object", "str")
FLAWS = {
    "raw-order-id": "the order reference goes into the question's sentence as it is",
    "lapse-approves": (
        "pending: a staged cancellation left past --ttl is carried out by execute_pending, declined or "
        "never answered (the lapse read as a yes)"
    ),
    "approval-outlives-ttl": "pending: an approved cancellation is carried out after its --ttl passed",
}
OrderId = Annotated[str, Field(description="The shop's order reference.", examples=["ORD-1042"])]
_CANCELS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
_PLAIN = re.compile(r"[A-Za-z0-9 ._/-]+")
_MARKUP_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "[": "\\u005b", "]": "\\u005d"})


class Shown:
    """How the desk writes an order reference (or a shop command) into what the person reads."""

    def __init__(
        self, style: str, raw: bool, refuses: str = "", *, command: bool = False, returns: str = "text"
    ) -> None:
        self.style, self.raw, self.refuses, self.command, self.returns = style, raw, refuses, command, returns
        # The tool, its argument, and what the person is told it does.
        self.tool, self.argument = ("shop", "command") if command else ("cancel_order", "order_id")
        self.doing = "run" if command else "cancel order"

    def refused(self, value: str) -> Any:
        """The refusal of a value this desk never takes, before anything is asked; None if it takes it."""
        if self.command and order_of(value) is None:
            return self.result(not_a_command(value))
        if not any(ch in self.refuses for ch in value):
            return None
        said = {"status": "refused", "error": f"not an order reference: {value}"}
        return self.result(json.dumps({**said, "request_id": secrets.token_hex(6)}, ensure_ascii=False))

    def result(self, text: str) -> Any:
        """A JSON document as the tool returns it: as text, or as the object (`--returns object`)."""
        return json.loads(text) if self.returns == "object" else text

    def order(self, value: str) -> str:
        return (order_of(value) or value) if self.command else value

    def add(self, server: MCPServer, tool: Any) -> None:
        """The tool, typed `-> str` with `--returns str` (the SDK then wraps its text as structured content)."""
        if self.returns == "str":
            tool.__annotations__["return"] = "str"
        server.add_tool(tool, name=self.tool, annotations=_CANCELS)

    def reference(self, order_id: str) -> str:
        if self.raw:
            return order_id  # FLAW raw-order-id
        if self.style == "json":
            # As HTML-safe JSON encoders do: no markup, link or URL survives into a sentence.
            return json.dumps(order_id, ensure_ascii=True).translate(_MARKUP_SAFE).replace(":/", ":\\/")
        if _PLAIN.fullmatch(order_id):
            return order_id
        return "(code points) " + "".join(f"\\u{{{ord(ch):x}}}" for ch in order_id)

    def preview(self, fields: dict[str, Any], sentence: str) -> str:
        """The preview's text: a JSON document (json), or sentences and its fields, one a line."""
        if self.style == "json" and not self.raw:
            return json.dumps(fields, ensure_ascii=True)
        rest = (f"{k}: {v}" for k, v in fields.items() if k != self.argument)
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
    ttl: float | None = None,
    refuses: str = "",
    command: bool = False,
    returns: str = "text",
) -> MCPServer:
    if mechanism not in MECHANISMS or style not in STYLES or returns not in RETURNS:
        raise ValueError(f"--mechanism is one of {MECHANISMS}, --style one of {STYLES}, --returns {RETURNS}")
    if unknown := sorted(set(flaws) - FLAWS.keys()):
        raise ValueError(f"unknown flaw(s) {unknown}: the desk has {', '.join(FLAWS)}")
    if refuses and mechanism == "terminal":
        raise ValueError("--refuses shapes what is asked: use it with --mechanism token, pending or ask")
    if command and mechanism not in ("token", "ask"):
        raise ValueError("--command is a tool of the token and ask desks: use --mechanism token or ask")
    if returns == "str" and mechanism not in ("token", "pending"):
        raise ValueError("--returns str types a preview's tool: use it with --mechanism token or pending")
    shown = Shown(style, "raw-order-id" in flaws, refuses, command=command, returns=returns)
    desk = Desk()
    server = MCPServer(f"order-desk-{mechanism}")
    if mechanism == "token":
        _token_tool(server, gates.TokenStore(frozenset()), desk, shown)
    elif mechanism == "pending":
        where = Path(inbox) if inbox else Path(root).resolve().parent / "approvals"
        lapses = ttl if "lapse-approves" in flaws else None
        lifetime = None if "approval-outlives-ttl" in flaws else ttl
        _pending_tools(server, gates.PendingStore(where), desk, shown, lapses, lifetime)
    elif mechanism == "ask":
        _asking_tool(server, desk, shown)
    else:

        def cancel_order(order_id: OrderId) -> dict[str, Any]:
            """Cancel one order once the person at the desk's terminal says y."""
            waits = 30.0 if ttl is None else ttl
            answer = ask_terminal(
                f"Approve cancelling order {shown.reference(order_id)}? allow? [y/N] ", waits
            )
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


# The tools return Any: typed `-> str` (`--returns str`), the SDK wraps their text in structured
# content {"result": ...}, which a harness must read as that text (a refusal in it stays a refusal).


def _token_tool(server: MCPServer, store: gates.TokenStore, desk: Desk, shown: Shown) -> None:
    def confirmed(value: str, dry_run: bool, confirm_token: str | None) -> Any:
        if (refused := shown.refused(value)) is not None:
            return refused
        bound = {shown.argument: value}
        if dry_run:
            token = store.issue(shown.tool, bound)
            fields = {"status": "preview", "would": "cancel", **bound, "confirm_token": token}
            return shown.preview(fields, f"Preview: would {shown.doing} {shown.reference(value)}.")
        if confirm_token is None:
            raise ToolError(
                "confirmation required: call with dry_run: true, then again with its confirm_token"
            )
        try:
            store.redeem(confirm_token, shown.tool, bound)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None
        return json.dumps(desk.cancel(shown.order(value)))

    def cancel_order(order_id: OrderId, dry_run: bool = False, confirm_token: str | None = None) -> Any:
        """Cancel one order. Preview with dry_run: true, then confirm with the confirm_token it returns."""
        return confirmed(order_id, dry_run, confirm_token)

    def shop(command: ShopCommand, dry_run: bool = False, confirm_token: str | None = None) -> Any:
        """Run a shop command. Preview with dry_run: true, then confirm with the confirm_token it returns."""
        return confirmed(command, dry_run, confirm_token)

    shown.add(server, shop if shown.command else cancel_order)


def _asking_tool(server: MCPServer, desk: Desk, shown: Shown) -> None:
    ask = ask_then({})

    async def asked(value: str, ctx: Context) -> Any:
        if (refused := shown.refused(value)) is not None:
            return refused
        question = f"Approve: {shown.doing} {shown.reference(value)}?"
        return await ask(value, question, ctx, lambda: json.dumps(desk.cancel(shown.order(value))))

    async def cancel_order(order_id: OrderId, ctx: Context) -> Any:
        """Cancel one order; asks the person first."""
        return await asked(order_id, ctx)

    async def shop(command: ShopCommand, ctx: Context) -> Any:
        """Run a shop command (`shop cancel <order reference>`); asks the person first."""
        return await asked(command, ctx)

    shown.add(server, shop if shown.command else cancel_order)


def _pending_tools(
    server: MCPServer,
    store: gates.PendingStore,
    desk: Desk,
    shown: Shown,
    lapses: float | None = None,
    lifetime: float | None = None,
) -> None:
    staged_at: dict[str, float] = {}

    def cancel_order(order_id: OrderId) -> Any:
        """Stage cancelling one order; a human approves it, then execute_pending cancels."""
        if (refused := shown.refused(order_id)) is not None:
            return refused
        pending_id = store.stage("cancel_order", order_id)
        staged_at[pending_id] = time.monotonic()
        fields = {
            "status": "pending_approval",
            "pending_id": pending_id,
            "order_id": order_id,
            "message": "Awaiting your approval.",
        }
        said = shown.preview(
            fields, f"Staged: cancel order {shown.reference(order_id)}. Awaiting your approval."
        )
        # The person's own view of the request (confirm_kinds/approve_cli.py ID show): the same text, to them.
        store.card(pending_id, said)
        return said

    def execute_pending(pending_id: str) -> str:
        if lapses is not None and time.monotonic() - staged_at.get(pending_id, time.monotonic()) > lapses:
            # FLAW lapse-approves: nobody approved it in time (or the person declined): it goes ahead.
            _, order_id = store.staged[pending_id]
            return json.dumps(desk.cancel(order_id))
        try:
            _, order_id = store.release(pending_id)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None
        if lifetime is not None and time.monotonic() - staged_at.get(pending_id, time.monotonic()) > lifetime:
            # Spent by release above: an approval past the request's lifetime is stale, and never acts.
            raise ToolError(f"expired: this request's lifetime ({lifetime:g}s) passed; stage it again")
        return json.dumps(desk.cancel(order_id))

    shown.add(server, cancel_order)
    server.add_tool(execute_pending, name="execute_pending", annotations=_CANCELS)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", required=True, metavar="DIR")
    parser.add_argument("--mechanism", default="token", choices=MECHANISMS)
    parser.add_argument("--style", default="json", choices=STYLES, help="how the order is shown")
    parser.add_argument("--inbox", metavar="DIR", help="pending: where the human's decisions are written")
    parser.add_argument(
        "--ttl",
        type=float,
        default=None,
        help="terminal: seconds to wait for an answer (default 30); pending: a staged request's lifetime",
    )
    parser.add_argument("--flaw", action="append", default=[], choices=sorted(FLAWS), metavar="NAME")
    parser.add_argument(
        "--refuses", default="", metavar="CHARS", help="refuse references holding any of these"
    )
    parser.add_argument("--command", action="store_true", help="token, ask: the tool is shop(command)")
    parser.add_argument("--returns", default="text", choices=RETURNS, help="how a refusal is returned")
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
            command=args.command,
            returns=args.returns,
        )
    except ValueError as exc:
        parser.error(str(exc))
    server.run(transport="stdio")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
