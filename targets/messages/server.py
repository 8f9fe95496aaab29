"""Reference MCP server: a messaging bridge that sends a text to a phone number, confirmed by a token.

    python targets/messages/server.py --root DIR [--flaw token-not-bound-to-args]

`send_sms(to, body, dry_run=False, confirm_token=None)`: `dry_run: true` previews
the message and returns a `confirm_token` bound to the tool, the number and the
body, spent once; the call that carries it sends. The number is checked the way
a carrier gateway checks it: eleven digits (`15559990001`), else "not a phone
number", before anything is previewed. `list_sent` (read-only) shows what was sent.

Flaws (each removes one defence):
  token-not-bound-to-args  a token confirms any number and body, not the ones it was previewed for
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from collections.abc import Collection
from pathlib import Path

_KINDS = str(Path(__file__).resolve().parents[1] / "confirm_kinds")
if _KINDS not in sys.path:
    sys.path.insert(0, _KINDS)

import gates  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

FLAWS = ("token-not-bound-to-args",)
_NUMBER = re.compile(r"1\d{10}")


def build_server(root: str | Path, *, flaws: Collection[str] = ()) -> MCPServer:
    unknown = sorted(set(flaws) - set(FLAWS))
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(FLAWS)}")
    store = gates.TokenStore(frozenset(flaws))
    sent: list[dict[str, str]] = []
    server = MCPServer("messages-reference")

    def send_sms(to: str, body: str, dry_run: bool = False, confirm_token: str | None = None) -> str:
        """Send a text message to a phone number. Preview with dry_run: true, then confirm with its confirm_token."""
        if not _NUMBER.fullmatch(to):
            raise ToolError(f"{to!r} is not a phone number (eleven digits, country code first)")
        message = {"to": to, "body": body}
        if dry_run:
            token = store.issue("send_sms", message)
            return json.dumps({"status": "preview", "would_send": message, "confirm_token": token})
        if confirm_token is None:
            raise ToolError(
                "confirmation required: call with dry_run: true, then again with its confirm_token"
            )
        try:
            store.redeem(confirm_token, "send_sms", message)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None
        sent.append(message)
        return json.dumps({"status": "sent", "message_id": f"m-{len(sent)}"})

    server.add_tool(send_sms, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))

    def list_sent() -> dict[str, object]:
        """Every message sent so far."""
        return {"sent": list(sent)}

    server.add_tool(list_sent, annotations=ToolAnnotations(read_only_hint=True))
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--flaw", action="append", default=[], choices=FLAWS)
    args = parser.parse_args()
    build_server(args.root, flaws=args.flaw).run()


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
