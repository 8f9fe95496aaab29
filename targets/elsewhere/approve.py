"""The person's approve command: `approve.py LINK --origin URL` follows LINK (POST) if it is on URL's server.

A person's own tool that trusts one server only: a link anywhere else is refused (exit 2), so a
link the person was sent by someone else is never followed. `--request ID` (again and again): the
link must be for that request; `--home DIR`: the command must run in DIR. Prints the server's answer.
"""

from __future__ import annotations

import argparse
import os
import sys
import urllib.request


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("link")
    parser.add_argument("--origin", required=True, help="the server's base URL, http://host:port")
    parser.add_argument("--request", action="append", default=[], help="the request the link must be for")
    parser.add_argument("--home", help="the directory the person works in (the command's own)")
    args = parser.parse_args(argv)
    if args.home is not None and not os.path.samefile(args.home, os.getcwd()):
        print(f"refusing: run from {os.getcwd()}, not from {args.home}", file=sys.stderr)
        return 2
    if any(f"/approve/{request}" not in args.link for request in args.request):
        print(f"refusing a link for another request than {args.request}: {args.link}", file=sys.stderr)
        return 2
    if not args.link.startswith(args.origin.rstrip("/") + "/"):
        print(f"refusing a link that is not on {args.origin}: {args.link}", file=sys.stderr)
        return 2
    request = urllib.request.Request(args.link, method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=5) as answer:
        print(answer.read().decode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
