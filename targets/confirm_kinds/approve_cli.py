"""The human's own channel to the pending server: a decision written where the server reads it.

    python targets/confirm_kinds/approve_cli.py --inbox DIR ID [approved|declined|show]

`show` prints what the server keeps for the person about the staged action (its
`ID.request`), as it is: what the person reads before deciding (`shows: true`).
A server that stages an action under its subject (`--pending-key path`) is given
that subject as ID: the request is the one last staged under it (inbox_slots.newest_slot).

The agent's connection cannot do this: it is a file in a directory outside the
server's root, written by a process the person runs. One new file per
decision (never rewritten), so the harness's oracle sees no effect from it.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from inbox_slots import newest_slot

_ID = re.compile(r"^[0-9a-f]{8,64}$")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--inbox", required=True, metavar="DIR", help="the directory the server reads")
    parser.add_argument("id", help="the pending id the server gave")
    parser.add_argument("decision", nargs="?", default="approved", choices=("approved", "declined", "show"))
    args = parser.parse_args()
    inbox = Path(args.inbox)
    slot = newest_slot(inbox, args.id) if inbox.is_dir() else None
    if slot is None and not _ID.match(args.id):
        parser.error(f"not a pending id, and nothing is staged under it: {args.id!r}")
    slot = slot or args.id
    if args.decision == "show":
        # The text as the server wrote it, every byte: a terminal shows what it holds.
        sys.stdout.buffer.write((inbox / f"{slot}.request").read_bytes() + b"\n")
        return
    inbox.mkdir(parents=True, exist_ok=True)
    fd = os.open(inbox / f"{slot}.{args.decision}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    print(f"{args.decision} {args.id}")


if __name__ == "__main__":
    main()
