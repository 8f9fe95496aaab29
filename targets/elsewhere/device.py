"""The paired device: `device.py card|confirm API CODE REQUEST_ID`, each request signed with the pairing code.

`card` shows the card the person reads (its text, as the device's screen shows it) and
approves nothing; `confirm` confirms it and prints `{"evidence_ref": ...}`.
"""

from __future__ import annotations

import hmac
import json
import socket
import sys

# The person runs this once per step, about a hundred times in one audit: a start that imports only
# a socket, hmac and json costs half what http.client and urllib.parse did (their imports, ssl, email
# and the rest, cost more than the request). One request per connection, HTTP/1.0: the device API
# closes it after its answer, so the answer is everything read until then.


def _call(api: str, code: str, method: str, path: str) -> dict[str, object]:
    signature = hmac.new(code.encode(), f"{method} {path} ".encode(), "sha256").hexdigest()
    host, _, port = api.removeprefix("http://").partition(":")
    request = (
        f"{method} {path} HTTP/1.0\r\nHost: {host}:{port}\r\nX-Device-Signature: {signature}\r\n"
        "Content-Length: 0\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(request.encode())
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if status >= 400:
        raise SystemExit(f"device: {method} {path} answered HTTP {status}: {body[:200]!r}")
    return dict(json.loads(body))


def main(argv: list[str]) -> int:
    what, api, code, request_id = argv
    if what == "card":
        print(_call(api, code, "GET", f"/cards/{request_id}")["card"])
    else:
        print(json.dumps(_call(api, code, "POST", f"/cards/{request_id}/confirm")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
