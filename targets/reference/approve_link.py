"""`--approve-link WEBHOOK`: the question is approved somewhere else, as an approval proxy does.

Round 1 answers `input_required` as always, and also posts `{text, approve_url}`
to the webhook: the person reads it (a chat app) and follows the link, which
carries a secret. The client's retry with the state is acted on only once the
link of that question was followed; before that it is refused, and the state is
not spent (the client may retry once the person has approved). The link is
served on loopback by a thread of this process.

`decides` (--link-decides), a careful style of its own: the link alone approves.
Any retry with the state acts once the link was followed, whatever the in-band
answer's form (its key, its content); a decline or cancel in it still closes the
question. The in-band answer is the client's, not the person's (mcp-airlock's oob
mode: "an accept in inputResponses is treated like no answer").

FLAW link-unchecked: the link is posted but never looked at; the client's
accept alone acts, as if the person had followed it.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Links:
    """One approve link per question (by its state), followed or not."""

    webhook: str
    unchecked: bool = False
    decides: bool = False
    base: str = ""
    _links: dict[str, tuple[str, str]] = field(default_factory=dict)  # state -> (link id, secret)
    _followed: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Links:
        links = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                path, _, query = self.path.partition("?")
                parts = path.strip("/").split("/")
                key = dict(p.partition("=")[::2] for p in query.split("&") if p).get("key", "")
                status = 404
                if len(parts) == 2 and parts[0] == "approve":
                    status = links.follow(parts[1], key)
                body = json.dumps({"approved": status == 200}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        api = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{api.server_address[1]}"
        threading.Thread(target=api.serve_forever, daemon=True).start()
        return self

    def post(self, state: str, text: str) -> None:
        """Send the person the link for the question `state` came with."""
        lid, secret = secrets.token_hex(8), secrets.token_urlsafe(16)
        with self._lock:
            self._links[state] = (lid, secret)
        body: dict[str, Any] = {"text": text, "approve_url": f"{self.base}/approve/{lid}?key={secret}"}
        request = urllib.request.Request(
            self.webhook, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=5):
            pass

    def follow(self, lid: str, key: str) -> int:
        with self._lock:
            for _, (known, secret) in self._links.items():
                if known == lid:
                    if not hmac.compare_digest(secret, key):
                        return 403
                    self._followed.add(lid)
                    return 200
        return 404

    def approved(self, state: str) -> bool:
        """Whether the person followed the link of the question `state` came with."""
        if self.unchecked:
            return True  # FLAW link-unchecked: the client's accept alone acts
        with self._lock:
            found = self._links.get(state)
            return found is not None and found[0] in self._followed
