"""targets/memory as the matrix audits it: the server in process, its person on their own review CLI.

`propose` files a change and answers with its `proposal_id`; the person reads it (`show`, or `list`:
every change still waiting), accepts or rejects it with `review.py`. One profile for every test of that
shape, so a test says only what it varies: the server's flaws, the review's, what is proposed, what
the person reads.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp_confirm_audit.profile.loader import Profile, profile_from_mapping

MEMORY = Path(__file__).resolve().parents[2] / "targets" / "memory"


def review(decision: str, *flaws: str, proposal: str = "{id}") -> str:
    """The person's review CLI: `review.py ROOT DECISION ID`, with the review's own flaws."""
    words = [sys.executable, str(MEMORY / "review.py"), "{root}", decision]
    words += [proposal] if proposal else []
    for flaw in flaws:
        words += ["--flaw", flaw]
    return " ".join(words)


def memory_profile(
    *flaws: str,
    content: str = "mcp-confirm-audit",
    reads: str | None = None,
    decline_flaws: tuple[str, ...] = (),
) -> Profile:
    """The memory server with `flaws`; the person reads `reads` (default: `show` of the one proposal)."""
    shown = reads if reads is not None else review("show")
    raw: dict[str, Any] = {
        "command": f"py:{MEMORY / 'server.py'}:build_server",
        "factory_args": {"flaws": list(flaws)},
        "tool": "propose",
        # The harness's filler by default, made each use's own: every use proposes a change of its own.
        "args": {"op": "add", "content": content},
        "call_timeout": 10.0,
        "confirmation": {
            "kind": "pending",
            "pending": {
                "id_from": "proposal_id",
                "human": [{"command": shown, "shows": True}, {"command": review("accept")}],
                "decline": [{"command": review("reject", *decline_flaws)}],
            },
        },
    }
    return profile_from_mapping(raw, source="test")
