"""targets/memory's store, on disk: its proposals and its memory, read and written without the SDK.

The server and the person's review CLI (`review.py`) both use it; the CLI runs once for every name the
person reads, so it imports nothing the server needs to serve (the SDK took a second of CPU each start).
"""

from __future__ import annotations

import json
from pathlib import Path


def proposals_dir(root: Path) -> Path:
    return root / ".memory" / "proposals"


def memories(root: Path) -> list[str]:
    """The memory: one statement a line of ROOT/memories.jsonl, as a JSON string."""
    kept = root / "memories.jsonl"
    lines = kept.read_text(encoding="utf-8").splitlines() if kept.exists() else []
    return [json.loads(line) for line in lines]


def remember(root: Path, content: str) -> int:
    """Write one statement into the memory; its line number is its id."""
    with (root / "memories.jsonl").open("a", encoding="utf-8") as kept:
        kept.write(json.dumps(content) + "\n")
    return len(memories(root))
