"""A legacy-era server whose one approved action leaves several marks: a wake that sends three packets.

    python targets/legacy/wake.py --root DIR [--flaw approval-cache]

`wake(host)` asks the person over the back channel (`elicitation/create`, what
`ctx.elicit` sends) and, on an accept whose `confirm` is a JSON `true`, appends
three lines to `packets.jsonl` in the root: one magic packet is sent three
times, as real Wake-on-LAN tools do. So one effect is three rows, and a count of
effects that does not learn that unit would read seven honest approvals as
twenty-one. With `--flaw approval-cache` one accept stands for every later call
on the same host for a minute: a call that acted on another call's approval.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The legacy reference server's SDK helpers, loaded by path: "server" is the name of several
# reference servers, and an in-process audit may have imported another one under it.
_SPEC = importlib.util.spec_from_file_location(
    "mca_legacy_reference_server", Path(__file__).resolve().with_name("server.py")
)
assert _SPEC is not None
assert _SPEC.loader is not None
_legacy = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_legacy)
_declares_form, _destructive, _sdk = _legacy._declares_form, _legacy._destructive, _legacy._sdk

FLAWS = {"approval-cache": "one accept stands for every call on the same host for a minute"}
PACKETS_PER_WAKE = 3
SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def build_server(root: str | Path, *, flaws: Sequence[str] = ()) -> Any:
    active = frozenset(flaws)
    unknown = sorted(active - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    log = Path(root) / "packets.jsonl"
    # The log is there from the start, as a sender's is: a wake adds rows to it.
    log.touch()
    approved: dict[str, float] = {}
    server, context_type, tool_error = _sdk()

    async def wake(host: str, ctx: Any) -> str:
        """Wake a machine on the local network, after asking the person."""
        cached = "approval-cache" in active and time.monotonic() - approved.get(host, -1e9) < 60
        if not cached:
            if not _declares_form(ctx):
                raise tool_error("this client cannot show a question; nothing was sent")
            session = ctx.request_context.session
            send = getattr(session, "elicit_form", None) or session.elicit
            answer = await send(f"Wake {json.dumps(host)}?", SCHEMA, related_request_id=ctx.request_id)
            content = answer.content if isinstance(answer.content, dict) else {}
            if answer.action != "accept" or content.get("confirm") is not True:
                raise tool_error("not woken: the person did not approve")
            approved[host] = time.monotonic()
        with log.open("a", encoding="utf-8") as out:
            for copy in range(PACKETS_PER_WAKE):
                out.write(json.dumps({"host": host, "copy": copy, "at": time.time()}) + "\n")
        return f"sent {PACKETS_PER_WAKE} magic packets to {host}"

    wake.__annotations__["ctx"] = context_type
    server.tool(annotations=_destructive())(wake)
    return server


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root", default=os.environ.get("MCP_AUDIT_ROOT"), required="MCP_AUDIT_ROOT" not in os.environ
    )
    parser.add_argument("--flaw", action="append", default=[], choices=sorted(FLAWS), metavar="NAME")
    args = parser.parse_args(argv)
    build_server(args.root, flaws=args.flaw).run()


if __name__ == "__main__":
    main()
