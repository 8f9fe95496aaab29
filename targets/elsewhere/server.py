"""Reference server whose person approves somewhere else: a webhook link, a paired device, a terminal, a signature.

    python targets/elsewhere/server.py --root DIR --channel webhook|device|terminal|signed
        [--webhook URL] [--ttl SECONDS] [--approver NAME] [--late-first-redeem SECONDS]
        [--flaw replay|transplant|agent-reachable|expiry|fails-open|raw-prompt|masks-secrets|console-markup|
                any-approver|no-recheck|check-then-spend|link-rearms]

`delete_file(path)` deletes one file under the root once a person approved
that exact deletion, on a channel the agent does not have:
- webhook: the call stages the deletion and posts `{text, approve_url}` to
  `--webhook`; the link (with a secret) is followed by the person; then
  `execute_request(request_id)` acts.
- device: the server prints its pairing code and device API on stderr; the
  paired device (device.py) fetches the card and confirms it, each request
  signed with HMAC under the pairing code, and gets an `evidence_ref`; then
  `confirm_request(request_id, evidence_ref)` acts.
- terminal: the call asks `allow? [y/N]` on the controlling terminal and acts on
  `y`; with no terminal, or no answer within --ttl, it refuses.
- signed: the call without `approval` returns a challenge naming the deletion;
  the owner signs it (sign.py, HMAC under the owner's key in ELSEWHERE_OWNER_KEY)
  and the call with that `approval` acts.
Every approval is bound to the action's path, spent once and expires after
--ttl. Each `--flaw` removes exactly one of those (or, agent-reachable, hands the
agent what only the person should have); for the terminal, fails-open takes no
terminal or no answer as a yes, and raw-prompt shows the path unescaped (at the terminal,
and on the device's card); masks-secrets redacts, in the same two places, a path that looks like it holds a
credential (an `sk-`, `ghp_` or `AKIA` key, `Bearer x`), so the person approves a file they cannot see;
console-markup prints the prompt through a console library's markup, so `[link=URL]` in a name opens a live
hyperlink on the terminal and `[bold]`, `[conceal]` restyle or hide the rest of it.
With `--approver NAME` (webhook) the approval system has users, each a bearer
token (ELSEWHERE_USERS: "alice:TOKEN,mallory:TOKEN"): the webhook goes to NAME,
and the link counts only when NAME follows it; any-approver takes it from any
user the system knows (who approves is never checked).
no-recheck acts on a yes without checking the path again: whatever the name leads to when the person
answers, links followed, is deleted (the person read about one file, another goes). check-then-spend
checks an approval and spends it a moment later, so redemptions sent together all pass the check.
link-rearms (webhook) never spends the approve link: followed again, it approves the spent request again.
`--late-first-redeem S` checks the first approval this process is asked to redeem S seconds
late, as a machine too loaded to redeem it in time would: no flaw, a slow world.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import sys
import threading
import time
import urllib.request
from collections.abc import Collection
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
for _path in (str(_HERE), str(_HERE.parent / "reference")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import paths  # noqa: E402
from ask_terminal import ask_terminal  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402
from race_gate import RaceGate  # noqa: E402

CHANNELS = ("webhook", "device", "terminal", "signed")
FLAWS = (
    "replay",
    "transplant",
    "agent-reachable",
    "expiry",
    "fails-open",
    "raw-prompt",
    "masks-secrets",
    "console-markup",
    "any-approver",
    "link-rearms",
    "no-recheck",
    "check-then-spend",
)
_DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)


def _shown(text: str) -> str:
    """The path as the person reads it: JSON-escaped, every character outside printable ASCII as \\uXXXX."""
    return json.dumps(text, ensure_ascii=True)


# What a redactor "before display" takes for a credential: well-known key prefixes and a bearer header.
_CREDENTIAL = re.compile(r"sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|Bearer\s+\S+")


# A console library's markup: `[link=URL]` and a style name in brackets, as rich-style printers read them.
_CONSOLE_TAG = re.compile(r"\[(link=[^\]\s]+|bold|italic|underline|reverse|conceal|[a-z]+ on [a-z]+)\]")
_CONSOLE_STYLES = {"bold": "1", "italic": "3", "underline": "4", "reverse": "7", "conceal": "8"}


def _console(text: str) -> str:
    """`text` as a console library prints it: its markup becomes escape sequences on the terminal."""

    def tag(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("link="):
            return f"\x1b]8;;{name.removeprefix('link=')}\x1b\\"  # OSC 8: a live hyperlink
        return f"\x1b[{_CONSOLE_STYLES.get(name, '7')}m"

    return _CONSOLE_TAG.sub(tag, text)


def _named(path: str, flaws: Collection[str]) -> str:
    """The path in the prompt the person reads (the terminal's, the device's card)."""
    if "raw-prompt" in flaws:
        return path  # FLAW raw-prompt: the name as it is
    if "masks-secrets" in flaws and _CREDENTIAL.search(path):
        return "[redacted]"  # FLAW masks-secrets: the whole value hidden, so the person approves blind
    if "console-markup" in flaws:
        return _console(_shown(path))  # FLAW console-markup: escaped, then its markup rendered live
    return _shown(path)


def _canonical(challenge: Any) -> str:
    return json.dumps(challenge, sort_keys=True, separators=(",", ":"))


def sign(key: str, message: str) -> str:
    return hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()


class Gate:
    """The approvals: each for one path, spent once, expiring."""

    def __init__(
        self,
        root: Path,
        channel: str,
        flaws: set[str],
        ttl: float,
        webhook: str | None,
        approver: str | None = None,
        late_first_redeem: float = 0.0,
    ) -> None:
        self.policy = paths.PathPolicy.create(root)
        self.root, self.channel, self.flaws, self.ttl, self.webhook = (
            self.policy.root,
            channel,
            flaws,
            ttl,
            webhook,
        )
        self.requests: dict[str, dict[str, Any]] = {}
        self.spent: set[str] = set()
        self.late_first_redeem = late_first_redeem
        self.lock = threading.Lock()
        self.race, self.turn = RaceGate(), threading.Lock()  # check-then-spend's window (race_gate.py)
        self.pairing = f"{secrets.randbelow(10**6):06d}"
        self.owner_key = os.environ.get("ELSEWHERE_OWNER_KEY", "")
        self.api: str | None = None
        # Who approves (the webhook goes to them), and every user of the approval system by token.
        self.approver = approver
        self.users = _users(os.environ.get("ELSEWHERE_USERS", "")) if approver else {}

    def who_approves(self, authorization: str | None) -> str | None:
        """Why the link's follower may not approve (None: they may): they must be the approver."""
        if self.approver is None:
            return None
        token = (authorization or "").removeprefix("Bearer ")
        user = next((u for u, t in self.users.items() if t and hmac.compare_digest(t, token)), None)
        if user is None:
            return "sign in to approve"
        if user != self.approver and "any-approver" not in self.flaws:  # FLAW any-approver
            return f"{user} is not the approver of this request"
        return None

    def target(self, path: str) -> paths.Target:
        """Every check made before asking and again before acting (targets/reference/paths.py)."""
        try:
            return self.policy.resolve(path)
        except paths.Refused as exc:
            raise ValueError(f"refused: {exc}") from None

    def delete(self, path: str, seen: paths.Identity | None) -> None:
        """Delete the file the person was asked about: beneath the root, no link followed, the same file."""
        if "no-recheck" in self.flaws:
            # FLAW no-recheck: the name is followed again at the yes, wherever it leads now.
            os.unlink(os.path.realpath(os.path.join(self.policy.root, path)))
            return
        target = self.target(path)
        try:
            paths.unlink_beneath(self.policy.root, target.parts, seen or target.identity)
        except paths.Refused as exc:
            raise ValueError(f"refused: {exc}") from None

    def stage(self, path: str) -> dict[str, Any]:
        seen = self.target(path).identity
        rid = secrets.token_hex(8)
        secret = secrets.token_urlsafe(16)
        with self.lock:
            self.requests[rid] = {
                "path": path,
                "seen": seen,
                "secret": secret,
                "approved": False,
                "at": time.monotonic(),
                "evidence": None,
            }
        return {"request_id": rid, "secret": secret}

    def live(self, rid: str) -> dict[str, Any]:
        request = self.requests.get(rid)
        if request is None:
            raise ValueError("refused: no such request")
        if rid in self.spent and "replay" not in self.flaws:
            raise ValueError("refused: that approval was already used")
        if time.monotonic() - request["at"] > self.ttl and "expiry" not in self.flaws:
            raise ValueError("refused: that approval has expired")
        return request

    def _usable(self, rid: str, path: str | None) -> tuple[dict[str, Any], str]:
        """The live request `rid`, and the path it may delete: its own (or, transplant, any)."""
        request = self.live(rid)
        path = request["path"] if path is None else path
        if request["path"] != path and "transplant" not in self.flaws:
            raise ValueError("refused: that approval is for another file")
        return request, path

    def act(self, rid: str, path: str | None = None) -> str:
        """Spend the approval `rid` and delete its file (or `path`, which must be its file).

        Checked and spent in one step under the lock (tools run in threads, side by side): two
        redemptions that arrive together cannot both find it unspent.
        """
        late, self.late_first_redeem = self.late_first_redeem, 0.0
        time.sleep(late)
        if "check-then-spend" in self.flaws:
            # FLAW check-then-spend: checked, then spent a moment later: redemptions sent together all pass.
            # The moment is held open by the race gate (each one that passed waits there for the others),
            # not by a pause, and each then acts in its turn, once its file is back.
            request, path = self._usable(rid, path)
            self.race.passed(rid)
            with self.lock:
                self.spent.add(rid)
            with self.turn:
                self.race.until(lambda: os.path.lexists(os.path.join(self.policy.root, path)))
                self.delete(path, request["seen"] if path == request["path"] else None)
            return f"deleted {_shown(path)}"
        with self.lock:
            request, path = self._usable(rid, path)
            self.spent.add(rid)
        self.delete(path, request["seen"] if path == request["path"] else None)
        return f"deleted {_shown(path)}"


def build(gate: Gate) -> MCPServer:
    server = MCPServer("elsewhere-reference")
    channel, flaws = gate.channel, gate.flaws

    if channel == "webhook":

        @server.tool(annotations=_DESTRUCTIVE)
        def delete_file(path: str) -> str:
            """Stage deleting one file; a person approves it from the link sent to them."""
            staged = gate.stage(path)
            link = f"{gate.api}/approve/{staged['request_id']}?key={staged['secret']}"
            if "agent-reachable" in flaws:
                link = f"{gate.api}/approve/{staged['request_id']}"
            body = {
                "request_id": staged["request_id"],
                "text": f"Delete {_shown(path)}?",
                "approve_url": link,
            }
            if gate.approver:
                body["to"] = gate.approver
            _post(gate.webhook, body)
            said = {"status": "pending_approval", "request_id": staged["request_id"]}
            if "agent-reachable" in flaws:
                said["approve_url"] = link
            return json.dumps(said)

        @server.tool(annotations=_DESTRUCTIVE)
        def execute_request(request_id: str) -> str:
            """Delete the file of an approved request."""
            request = gate.live(request_id)
            approved = request["approved"]
            if "transplant" in flaws and not approved:
                # Any approval not yet used will do (and is used up): it need not be this request's.
                other = next(
                    (k for k, r in gate.requests.items() if r["approved"] and k not in gate.spent), None
                )
                if other is not None:
                    gate.spent.add(other)
                    approved = True
            if not approved:
                raise ValueError("refused: not approved")
            return gate.act(request_id)

    elif channel == "device":

        @server.tool(annotations=_DESTRUCTIVE)
        def delete_file(path: str) -> str:
            """Stage deleting one file; the paired device shows the card and confirms it."""
            staged = gate.stage(path)
            said = {"status": "pending_device", "request_id": staged["request_id"]}
            if "agent-reachable" in flaws:
                # What the device needs, told to the agent too.
                said["pairing"] = f"device api {gate.api} pairing code {gate.pairing}"
            return json.dumps(said)

        @server.tool(annotations=_DESTRUCTIVE)
        def confirm_request(request_id: str, evidence_ref: str) -> str:
            """Delete the file once the device's evidence for this request is given."""
            request = gate.live(request_id)
            wanted = {request["evidence"]}
            if "transplant" in flaws:
                wanted = {r["evidence"] for r in gate.requests.values()}  # any device evidence will do
            if evidence_ref not in wanted - {None}:
                raise ValueError("refused: no device evidence for this request")
            return gate.act(request_id)

    elif channel == "terminal":

        @server.tool(annotations=_DESTRUCTIVE)
        def delete_file(path: str) -> str:
            """Delete one file once the person at the server's terminal says y."""
            seen = gate.target(path).identity
            named = _named(path, flaws)
            answer = ask_terminal(f"Delete {named}? allow? [y/N] ", gate.ttl)
            if answer is None and "fails-open" in flaws:
                answer = True  # FLAW fails-open: nobody to ask (or nobody answered) reads as a yes
            if not answer:
                raise ValueError("refused: the person at the terminal did not approve")
            gate.delete(path, seen)
            return f"deleted {_shown(path)}"

    else:

        @server.tool(annotations=_DESTRUCTIVE)
        def delete_file(path: str, approval: str = "") -> str:
            """Delete one file once its owner signed the challenge for it."""
            if not approval:
                staged = gate.stage(path)
                challenge = {"action": "delete_file", "path": path, "nonce": staged["request_id"]}
                return json.dumps({"status": "approval_required", "challenge": challenge})
            try:
                signed = json.loads(approval)
                if "agent-reachable" in flaws and "nonce" in signed:
                    # The challenge it handed the agent, taken back as if the owner had signed it.
                    signed = {"challenge": signed, "signature": sign(gate.owner_key, _canonical(signed))}
                challenge, signature = signed["challenge"], signed["signature"]
            except (ValueError, KeyError, TypeError):
                raise ValueError("refused: the approval is not a signed challenge") from None
            key = gate.owner_key
            if not key or not hmac.compare_digest(sign(key, _canonical(challenge)), str(signature)):
                raise ValueError("refused: not signed by the owner")
            if challenge.get("path") != path and "transplant" not in flaws:
                raise ValueError("refused: that approval is for another file")
            return gate.act(
                str(challenge.get("nonce")), str(challenge.get("path")) if "transplant" not in flaws else path
            )

    return server


def _users(said: str) -> dict[str, str]:
    """ELSEWHERE_USERS, "alice:TOKEN,mallory:TOKEN": each user of the approval system and their token."""
    pairs = (item.partition(":") for item in said.split(",") if item.strip())
    return {name.strip(): token.strip() for name, _, token in pairs if name.strip() and token.strip()}


def _post(url: str | None, body: dict[str, Any]) -> None:
    if not url:
        return
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5):
        pass


def _serve_api(gate: Gate) -> None:
    """The person's endpoints, on loopback: the approve link (webhook) and the device API (device)."""

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path, _, query = self.path.partition("?")
            parts = path.strip("/").split("/")
            try:
                if parts[0] == "approve" and len(parts) == 2:
                    rearms = "link-rearms" in gate.flaws  # FLAW link-rearms: the link is never spent
                    request = gate.requests.get(parts[1]) if rearms else gate.live(parts[1])
                    if request is None:
                        raise ValueError("refused: no such request")
                    key = dict(p.partition("=")[::2] for p in query.split("&") if p).get("key", "")
                    if "agent-reachable" not in gate.flaws and not hmac.compare_digest(
                        key, request["secret"]
                    ):
                        return self._reply(403, {"error": "bad key"})
                    if (refused := gate.who_approves(self.headers.get("Authorization"))) is not None:
                        return self._reply(403, {"error": refused})
                    request["approved"] = True
                    if rearms:
                        gate.spent.discard(parts[1])  # followed again, it approves the request again
                    return self._reply(200, {"approved": parts[1]})
                if parts[0] == "cards" and len(parts) == 3 and parts[2] == "confirm":
                    self._signed(raw)
                    request = gate.live(parts[1])
                    request["evidence"] = request["evidence"] or f"ev-{secrets.token_hex(8)}"
                    return self._reply(200, {"evidence_ref": request["evidence"]})
            except PermissionError as exc:
                return self._reply(401, {"error": str(exc)})
            except ValueError as exc:
                return self._reply(409, {"error": str(exc)})
            self._reply(404, {"error": "no such route"})

        def do_GET(self) -> None:
            parts = self.path.strip("/").split("/")
            try:
                if parts[0] == "cards" and len(parts) == 2:
                    self._signed(b"")
                    request = gate.live(parts[1])
                    path = request["path"]
                    named = _named(path, gate.flaws)
                    return self._reply(200, {"card": f"Delete {named}?", "request_id": parts[1]})
            except PermissionError as exc:
                return self._reply(401, {"error": str(exc)})
            except ValueError as exc:
                return self._reply(409, {"error": str(exc)})
            self._reply(404, {"error": "no such route"})

        def _signed(self, body: bytes) -> None:
            said = self.headers.get("X-Device-Signature", "")
            wanted = sign(gate.pairing, f"{self.command} {self.path} ".encode().decode() + body.decode())
            if not hmac.compare_digest(said, wanted):
                raise PermissionError("the request is not signed by the paired device")

        def log_message(self, format: str, *args: object) -> None:
            pass

    api = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    gate.api = f"http://127.0.0.1:{api.server_address[1]}"
    threading.Thread(target=api.serve_forever, daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--channel", choices=CHANNELS, required=True)
    parser.add_argument("--webhook")
    parser.add_argument("--ttl", type=float, default=30.0)
    parser.add_argument("--approver", help="webhook: the user the approval is sent to (ELSEWHERE_USERS)")
    parser.add_argument("--flaw", action="append", choices=FLAWS, default=[])
    parser.add_argument("--late-first-redeem", type=float, default=0.0, metavar="SECONDS")
    args = parser.parse_args(argv)
    gate = Gate(
        Path(args.root),
        args.channel,
        set(args.flaw),
        args.ttl,
        args.webhook,
        args.approver,
        args.late_first_redeem,
    )
    if args.channel in ("webhook", "device"):
        _serve_api(gate)
    if args.channel == "device":
        print(f"device api {gate.api}", file=sys.stderr, flush=True)
        print(f"pairing code {gate.pairing}", file=sys.stderr, flush=True)
    # A refusal raised from a tool is logged with its traceback; the SDK's default handler renders it
    # with rich (syntax-highlighted frames), a CPU-heavy render serialised behind the logging lock, so on
    # a loaded machine a burst of refused redemptions queued behind it for seconds each. A plain handler
    # says the same in microseconds (the SDK's own basicConfig then leaves it in place).
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    build(gate).run()


if __name__ == "__main__":
    main()
