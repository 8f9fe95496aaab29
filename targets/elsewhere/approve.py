"""The person's approve command: `approve.py LINK --origin URL` follows LINK (POST) if it is on URL's server.

A person's own tool that trusts one server only: a link anywhere else is refused (exit 2), so a
link the person was sent by someone else is never followed. Prints the server's answer.
"""

from __future__ import annotations

import argparse
import sys
import urllib.request


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("link")
    parser.add_argument("--origin", required=True, help="the server's base URL, http://host:port")
    args = parser.parse_args(argv)
    if not args.link.startswith(args.origin.rstrip("/") + "/"):
        print(f"refusing a link that is not on {args.origin}: {args.link}", file=sys.stderr)
        return 2
    request = urllib.request.Request(args.link, method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=5) as answer:
        print(answer.read().decode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
