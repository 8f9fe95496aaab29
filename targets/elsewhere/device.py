"""The paired device: `device.py card|confirm API CODE REQUEST_ID`, each request signed with the pairing code.

`card` shows the card the person reads (its text, as the device's screen shows it) and
approves nothing; `confirm` confirms it and prints `{"evidence_ref": ...}`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
import urllib.request


def _call(api: str, code: str, method: str, path: str) -> dict[str, object]:
    signature = hmac.new(code.encode(), f"{method} {path} ".encode(), hashlib.sha256).hexdigest()
    request = urllib.request.Request(f"{api}{path}", method=method, data=b"" if method == "POST" else None)
    request.add_header("X-Device-Signature", signature)
    with urllib.request.urlopen(request, timeout=5) as answer:
        return dict(json.loads(answer.read()))


def main(argv: list[str]) -> int:
    what, api, code, request_id = argv
    if what == "card":
        print(_call(api, code, "GET", f"/cards/{request_id}")["card"])
    else:
        print(json.dumps(_call(api, code, "POST", f"/cards/{request_id}/confirm")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
