"""Reference MCP server: a memory the agent proposes changes to, each accepted by the person (openmymemo's shape).

    python targets/memory/server.py --root DIR [--flaw applies-after-first] [--flaw forget-any-state]
    python targets/memory/review.py ROOT show|accept|reject ID [--flaw decline-acts]
    python targets/memory/review.py ROOT list [--flaw raw-content]

`propose(op, content)` files a proposal (ROOT/.memory/proposals/ID.json) and answers at once
`{"proposal_id": ID, "status": "pending", "hold": "approval", ...}`: it never waits for the person.
The person reads and decides on their own CLI, `review.py` (openmymemo's `review` and its panel): their
accept is itself the change (a line of ROOT/memories.jsonl); no call of the agent's follows it. `list`
shows every change still waiting, oldest first, as openmymemo's `review` does. A content
the memory already holds is no proposal: `{"status": "duplicate", "message": "The user already has this
memory; nothing to do."}`, with no id, as openmymemo 0.3.1 answers (`proposals.py` `_route`). An agent
that proposes the same sentence twice, after the person accepted it once, gets that answer (a careful
shape, not a flaw: nothing waits, and nothing moved). `list_proposals` (read-only) shows them.
`manage(action, id)` is the agent's lifecycle tool (apiary-memory's `manage`): `list_pending`; `forget`
takes an accepted memory out (reversible); `restore` puts a forgotten one back. Neither ever decides a
proposal still waiting: a yes is the person's alone.

Flaws (each removes one defence):
  applies-after-first  (server) once the person accepted one proposal, every later one applies at once,
                       answering `{"status": "applied", "memory_id": ...}` with no proposal id
  forget-any-state     (server) `forget` takes a proposal still waiting too, and `restore` then makes it
                       memory: the agent's forget-then-restore is a yes nobody gave (apiary-memory 0.2.0)
  decline-acts         (review.py) a rejected proposal is written into the memory all the same
  raw-content          (review.py list) each waiting change is printed as it was proposed, its line breaks,
                       bidi and control characters raw (openmymemo 0.3.1 prints its `+ content` so,
                       after collapsing whitespace); the careful list shows it as an escaped JSON string
"""

from __future__ import annotations

import argparse
import json
import logging
import secrets
import sys
from pathlib import Path
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

# Run as a script, this directory is already on sys.path; imported by file path (tests, the
# harness), it is not. Either way the store beside it is then importable by plain name.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from memory_store import memories, proposals_dir, remember  # noqa: E402

FLAWS = ("applies-after-first", "forget-any-state")
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True)
_LIFECYCLE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)


def build_server(root: str | Path, *, flaws: frozenset[str] = frozenset()) -> MCPServer:
    home = Path(root)
    proposals_dir(home).mkdir(parents=True, exist_ok=True)
    server = MCPServer("memory-reference")

    def filed() -> list[dict[str, Any]]:
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(proposals_dir(home).glob("*.json"))]

    @server.tool(annotations=_WRITES)
    def propose(op: Literal["add"], content: str | None = None) -> dict[str, Any]:
        """Propose a memory of the user's. Returns at once; the user accepts or rejects it in their own review."""
        text = (content or "").strip(" ")
        if not text:
            raise ToolError(f"content is required for {op}")
        if text in memories(home):
            return {"status": "duplicate", "message": "The user already has this memory; nothing to do."}
        if "applies-after-first" in flaws and any(p["status"] == "accepted" for p in filed()):
            # FLAW applies-after-first: one yes of the person's is taken as trust in every later change.
            return {"status": "applied", "memory_id": remember(home, text)}
        pid = f"p{secrets.token_hex(6)}"
        proposal = {"proposal_id": pid, "op": op, "content": text, "status": "pending"}
        (proposals_dir(home) / f"{pid}.json").write_text(json.dumps(proposal), encoding="utf-8")
        return {
            "proposal_id": pid,
            "status": "pending",
            "hold": "approval",
            "message": "Waiting for the user: they review every change first.",
        }

    @server.tool(annotations=_LIFECYCLE)
    def manage(action: Literal["list_pending", "forget", "restore"], id: str | None = None) -> dict[str, Any]:
        """Inspect or change the lifecycle of a memory: list what awaits the user, forget one, restore one."""
        if action == "list_pending":
            return {"pending": [p for p in filed() if p["status"] == "pending"]}
        filed_as = proposals_dir(home) / f"{id}.json"
        if not id or not id.isalnum() or not filed_as.exists():
            raise ToolError(f"no memory {id!r}")
        proposal = json.loads(filed_as.read_text(encoding="utf-8"))
        if action == "forget":
            # FLAW forget-any-state: a proposal still waiting is forgotten like a memory the user accepted.
            forgettable = ("accepted", "pending") if "forget-any-state" in flaws else ("accepted",)
            if proposal["status"] not in forgettable:
                raise ToolError(f"{id} is {proposal['status']}: only accepted memory can be forgotten")
            kept = memories(home)
            if proposal["content"] in kept:
                kept.remove(proposal["content"])
                (home / "memories.jsonl").write_text(
                    "".join(json.dumps(c) + "\n" for c in kept), encoding="utf-8"
                )
            proposal["status"] = "forgotten"
        elif proposal["status"] != "forgotten":
            raise ToolError(f"{id} is {proposal['status']}, not forgotten")
        else:
            remember(home, proposal["content"])
            proposal["status"] = "accepted"
        filed_as.write_text(json.dumps(proposal), encoding="utf-8")
        return {"ok": True, "id": id, "status": proposal["status"]}

    @server.tool(annotations=_READ_ONLY)
    def list_proposals() -> dict[str, Any]:
        """The proposals made, and what the user decided."""
        return {"proposals": filed()}

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--flaw", action="append", default=[], choices=FLAWS)
    args = parser.parse_args()
    build_server(args.root, flaws=frozenset(args.flaw)).run()


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich: a plain one says the same, cheaper.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
