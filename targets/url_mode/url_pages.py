"""The approval pages of the URL-mode server: who opened them, and what they completed.

Each elicitation is a record (the order it approves, the person who started it,
when, its status) behind an unguessable id; its page lives at
`http://127.0.0.1:PORT/approve/ID` on a loopback port of this process's own, served
from a thread. The person's browser proves who they are with a session cookie
(`session=TOKEN`, from `--people-env`): the page shows the payment only to the person
who started it, and completing it (the form's POST, with the page's own CSRF value)
marks it completed by them. The MCP call then sees the status; the page itself never
pays. Flaws (url_flaws.py) loosen exactly one of these checks each.
"""

from __future__ import annotations

import html
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote

from payment_book import Order

__all__ = ["Elicitation", "PageServer", "Store"]

PENDING, COMPLETED, CLOSED, CONSUMED = "pending", "completed", "closed", "consumed"


@dataclass
class Elicitation:
    id: str
    order: Order
    owner: str
    question: str
    started: float
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(16))
    status: str = PENDING
    completed_by: str | None = None


class Store:
    """Every elicitation of this process; one lock, shared by the MCP loop and the page thread."""

    def __init__(self, ttl_seconds: float) -> None:
        self._ttl = ttl_seconds
        self._lock = threading.Lock()
        self._all: dict[str, Elicitation] = {}

    def start(self, order: Order, owner: str, question: str) -> Elicitation:
        found = Elicitation(secrets.token_urlsafe(24), order, owner, question, time.monotonic())
        with self._lock:
            self._all[found.id] = found
        return found

    def get(self, elicitation_id: str) -> Elicitation | None:
        with self._lock:
            return self._all.get(elicitation_id)

    def expired(self, found: Elicitation) -> bool:
        return time.monotonic() - found.started > self._ttl

    def complete(self, elicitation_id: str, person: str) -> bool:
        with self._lock:
            found = self._all.get(elicitation_id)
            if found is None or found.status != PENDING or self.expired(found):
                return False
            found.status, found.completed_by = COMPLETED, person
            return True

    def close(self, elicitation_id: str) -> None:
        with self._lock:
            found = self._all.get(elicitation_id)
            if found is not None and found.status in (PENDING, COMPLETED):
                found.status = CLOSED

    def consume(self, elicitation_id: str) -> bool:
        """Completed -> consumed, once: of two redemptions, exactly one gets True."""
        with self._lock:
            found = self._all.get(elicitation_id)
            if found is None or found.status != COMPLETED or self.expired(found):
                return False
            found.status = CONSUMED
            return True


class PageServer:
    """The pages, on 127.0.0.1 and a port of their own, served from a daemon thread."""

    def __init__(self, store: Store, people: dict[str, str], flaws: frozenset[str]) -> None:
        self.store, self.flaws = store, flaws
        # session token -> person; the first person named is the one using the MCP client.
        self.sessions = {token: name for name, token in people.items()}
        self.owner = next(iter(people), "")
        handler = type("Handler", (_Handler,), {"pages": self})
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._http.daemon_threads = True
        threading.Thread(target=self._http.serve_forever, name="approval-pages", daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def url(self, found: Elicitation) -> str:
        url = f"{self.base}/approve/{found.id}"
        if "user-data-in-url" in self.flaws:
            # FLAW user-data-in-url: the person's address rides along, for "a friendlier page".
            url += "?email=" + quote(f"{found.owner}@example.com")
        return url

    def person(self, cookie: str | None) -> str | None:
        for part in (cookie or "").split(";"):
            name, _, value = part.strip().partition("=")
            if name == "session" and value in self.sessions:
                return self.sessions[value]
        return None


class _Handler(BaseHTTPRequestHandler):
    pages: PageServer

    def log_message(self, format: str, *args: object) -> None:
        return  # stdout is the protocol; stderr carries the server's own events only

    def do_GET(self) -> None:
        found, refusal = self._checked()
        if found is None:
            self._send(*refusal)
            return
        self._send(200, _page(found, raw="raw-page" in self.pages.flaws))

    def do_POST(self) -> None:
        found, refusal = self._checked()
        if found is None:
            self._send(*refusal)
            return
        length = min(int(self.headers.get("content-length") or 0), 4096)
        form = parse_qs(self.rfile.read(length).decode("utf-8", "replace"))
        if form.get("csrf") != [found.csrf] or form.get("decision") != ["approve"]:
            self._send(400, _text("This form was not sent by the approval page."))
            return
        person = self.pages.person(self.headers.get("cookie")) or "whoever holds the link"
        if not self.pages.store.complete(found.id, person):
            self._send(410, _text("This approval is no longer open."))
            return
        self._send(200, _text("Approved. You can return to your assistant, which will now send it."))

    def _checked(self) -> tuple[Elicitation | None, tuple[int, str]]:
        """The elicitation this request may see, or the refusal to send instead."""
        path = self.path.split("?", 1)[0]
        prefix = "/approve/"
        found = self.pages.store.get(path[len(prefix) :]) if path.startswith(prefix) else None
        if found is None:
            return None, (404, _text("There is no such approval."))
        flaws = self.pages.flaws
        if "preauthenticated-url" not in flaws:  # FLAW preauthenticated-url: the link alone is enough
            person = self.pages.person(self.headers.get("cookie"))
            if person is None:
                return None, (401, _text("Sign in to see this approval."))
            if person != found.owner and "any-person-completes" not in flaws:
                # FLAW any-person-completes skips this: any signed-in person may approve.
                return None, (403, _text("This approval was started by someone else."))
        if found.status != PENDING or self.pages.store.expired(found):
            return None, (410, _text("This approval is no longer open."))
        return found, (200, "")

    def _send(self, status: int, body: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(data)))
        self.send_header("cache-control", "no-store")
        self.end_headers()
        self.wfile.write(data)


def _text(message: str) -> str:
    return f"<!doctype html><title>Approval</title><p>{html.escape(message)}</p>"


def _page(found: Elicitation, *, raw: bool) -> str:
    # FLAW raw-page: the question goes into the HTML as it is, so a memo's markup is live.
    lines = found.question.splitlines()
    shown = "".join(f"<p>{line if raw else html.escape(line)}</p>" for line in lines)
    return (
        "<!doctype html><html><head><title>Approve a payment</title></head><body>"
        f"<h1>Approve a payment</h1>{shown}"
        f'<form method="post" action="/approve/{found.id}">'
        f'<input type="hidden" name="csrf" value="{found.csrf}">'
        '<button type="submit" name="decision" value="approve">Send this payment</button>'
        "</form></body></html>"
    )
