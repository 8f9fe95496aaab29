"""The paired device: `device.py card|confirm API CODE REQUEST_ID`, each request signed with the pairing code.

`card` shows the card the person reads (its text, as the device's screen shows it) and
approves nothing; `confirm` confirms it and prints `{"evidence_ref": ...}`.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import sys
from urllib.parse import urlsplit

# http.client, not urllib.request: the person runs this once per step, over a hundred times in one
# audit, and urllib.request's imports (ssl, email, cookies) cost more than the request itself.


def _call(api: str, code: str, method: str, path: str) -> dict[str, object]:
    signature = hmac.new(code.encode(), f"{method} {path} ".encode(), hashlib.sha256).hexdigest()
    where = urlsplit(f"{api}{path}")
    connection = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=5)
    try:
        target = where.path + (f"?{where.query}" if where.query else "")
        connection.request(
            method, target, body=b"" if method == "POST" else None, headers={"X-Device-Signature": signature}
        )
        answer = connection.getresponse()
        body = answer.read()
        if answer.status >= 400:
            raise SystemExit(f"device: {method} {path} answered HTTP {answer.status}: {body[:200]!r}")
        return dict(json.loads(body))
    finally:
        connection.close()


def main(argv: list[str]) -> int:
    what, api, code, request_id = argv
    if what == "card":
        print(_call(api, code, "GET", f"/cards/{request_id}")["card"])
    else:
        print(json.dumps(_call(api, code, "POST", f"/cards/{request_id}/confirm")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
