"""Reference server whose confirmation channel is not configured: it never asks anyone.

    python targets/flag_only/server.py --root DIR [--style error|result] [--flaw flag-is-the-only-gate]

`delete_file(path, confirmed=False)` deletes one file under the root. No way to
reach a person is configured, so it never asks: without a channel it refuses
every deletion, in words that name no argument ("No approval channel is
configured"), so nothing tells a harness which argument would skip it. The
careful server refuses `confirmed: true` from the caller as well (the caller's
word is not the person's); the flaw `flag-is-the-only-gate` takes it, records
the deletion as "confirmed" and acts: the caller's flag is the whole gate.
`--style` says the refusals as a tool error (`error`) or inside an ordinary JSON
result (`result`: `{"ok": false, "reason": ...}`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

_HERE = Path(__file__).resolve().parent
if str(_HERE.parent / "reference") not in sys.path:
    sys.path.insert(0, str(_HERE.parent / "reference"))

import paths  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

FLAWS = ("flag-is-the-only-gate",)
STYLES = ("error", "result")
NO_CHANNEL = "No approval channel is configured for this server; nothing was deleted."


def build_server(root: str | Path, *, flaws: Collection[str] = (), style: str = "error") -> MCPServer:
    if unknown := sorted(set(flaws) - set(FLAWS)):
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(FLAWS)}")
    if style not in STYLES:
        raise ValueError(f"--style is one of {', '.join(STYLES)}, got {style!r}")
    policy = paths.PathPolicy.create(root)
    server = MCPServer("flag-only-reference")
    journal: list[str] = []

    def refused(reason: str) -> str:
        if style == "error":
            raise ToolError(reason)
        return json.dumps({"ok": False, "reason": reason})

    def delete_file(path: str, confirmed: bool = False) -> str:
        """Delete one file inside the root, once the deletion is confirmed."""
        try:
            target = policy.resolve(path)
        except paths.Refused as exc:
            return refused(str(exc))
        if not confirmed or "flag-is-the-only-gate" not in flaws:
            return refused(NO_CHANNEL)
        # FLAW flag-is-the-only-gate: the caller's confirmed=true is recorded as the person's yes.
        journal.append(f"confirmed {target.rel}")
        paths.unlink_beneath(policy.root, target.parts, target.identity)
        return json.dumps({"ok": True, "deleted": target.rel, "confirmed": True})

    server.add_tool(
        delete_file,
        name="delete_file",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False),
    )
    return server


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--style", choices=STYLES, default="error")
    parser.add_argument("--flaw", action="append", choices=FLAWS, default=[])
    args = parser.parse_args(argv)
    build_server(args.root, flaws=args.flaw, style=args.style).run()


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
