"""The person's own review of targets/memory's proposals (openmymemo's `review` and panel), one at a time.

    python targets/memory/review.py ROOT show ID      # what the person reads: the change, escaped
    python targets/memory/review.py ROOT accept ID    # their yes: the change is made, now
    python targets/memory/review.py ROOT reject ID    # their no
        [--flaw decline-acts]                         # a rejected proposal is written all the same
    python targets/memory/review.py ROOT list         # every change still waiting, oldest first
        [--flaw raw-content]                          # each printed raw, as openmymemo's review does

A proposal that is not pending any more (accepted, rejected) is refused, exit 1: a decision is made once.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memory_store import proposals_dir, remember

FLAWS = ("decline-acts", "raw-content")


def _filed_at(proposal: Path) -> int:
    return proposal.stat().st_mtime_ns


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root")
    parser.add_argument("decision", choices=("show", "accept", "reject", "list"))
    parser.add_argument("proposal_id", nargs="?", default="")
    parser.add_argument("--flaw", action="append", default=[], choices=FLAWS)
    args = parser.parse_args()
    root = Path(args.root)
    if args.decision == "list":
        waiting = [
            json.loads(p.read_text(encoding="utf-8"))
            for p in sorted(proposals_dir(root).glob("*.json"), key=_filed_at)
        ]
        waiting = [p for p in waiting if p["status"] == "pending"]
        print(f"Waiting for you: {len(waiting)}")
        for i, proposal in enumerate(waiting, 1):
            # FLAW raw-content: the change printed as proposed, whatever it holds.
            text = proposal["content"] if "raw-content" in args.flaw else json.dumps(proposal["content"])
            print(f"\n[{i}/{len(waiting)}] wants to {proposal['op']}\n  + {text}")
        return 0
    filed = proposals_dir(root) / f"{args.proposal_id}.json"
    if not args.proposal_id.isalnum() or not filed.exists():
        print(f"no proposal {args.proposal_id!r}", file=sys.stderr)
        return 1
    proposal = json.loads(filed.read_text(encoding="utf-8"))
    if args.decision == "show":
        print(f"wants to {proposal['op']}: + {json.dumps(proposal['content'])} ({proposal['status']})")
        return 0
    if proposal["status"] != "pending":
        print(f"proposal {args.proposal_id} is {proposal['status']}, not pending", file=sys.stderr)
        return 1
    if args.decision == "accept" or "decline-acts" in args.flaw:
        # FLAW decline-acts (on reject): the person's no is written into the memory as their yes is.
        remember(root, proposal["content"])
    proposal["status"] = "accepted" if args.decision == "accept" else "rejected"
    filed.write_text(json.dumps(proposal), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
