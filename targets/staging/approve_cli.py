"""The person's approval of a staged invoice: `approve_cli.py ROOT ID [--show | --decline]`.

Prints what they approve (the staged invoice) and records their decision with
the digest of exactly that, for the post server to check. `--show` prints it and
decides nothing: what the person reads before they approve.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from staging_store import Refused, Store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root")
    parser.add_argument("invoice_id")
    parser.add_argument("--decline", action="store_true")
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    store = Store(args.root)
    try:
        invoice = store.staged(args.invoice_id)
        if args.show:
            print(f"to approve: {json.dumps(invoice, sort_keys=True)}")
            return 0
        decision = "declined" if args.decline else "approved"
        store.decide(args.invoice_id, decision)
    except Refused as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{decision}: {json.dumps(invoice, sort_keys=True)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
