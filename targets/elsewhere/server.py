"""Reference server whose person approves somewhere else: a webhook link, a paired device, a terminal, a signature.

    python targets/elsewhere/server.py --root DIR --channel webhook|device|terminal|signed
        [--webhook URL] [--ttl SECONDS] [--approver NAME] [--late-first-redeem SECONDS]
        [--flaw replay|transplant|agent-reachable|expiry|fails-open|raw-prompt|masks-secrets|console-markup|
                any-approver|no-recheck|check-then-spend|link-rearms|unsigned|any-device|asks-first|
                evidence-unchecked|type-ahead]
        [--fields one|two] [--port PORT] [--ticket] [--devices 1|2] [--discard flush|drain] [--journal [jsonl|sqlite]]

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
  `y`; with no terminal, or no answer within --ttl, it refuses. What was typed
  before the prompt is thrown away first: the input queue flushed, or with
  `--discard drain` every line already waiting read and dropped.
- signed: the call without `approval` returns a challenge naming the deletion;
  the owner signs it (sign.py, HMAC under the owner's key in ELSEWHERE_OWNER_KEY)
  and the call with that `approval` acts.
Every approval is bound to the action's path, spent once and expires after
--ttl. Each `--flaw` removes exactly one of those (or, agent-reachable, hands the
agent what only the person should have); for the terminal, fails-open takes no
terminal or no answer as a yes, and raw-prompt shows the path unescaped (at the terminal,
on the device's card, and in the webhook's text, which a chat app shows as text); masks-secrets redacts, in the same two places, a path that looks like it holds a
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
unsigned (device) takes any request as the paired device's: no signature is checked, so whoever
reaches the device API confirms a card without the pairing code.
`--devices 2` (device) pairs a second device, the requester's own laptop, with a code of its own: it sees
the cards, and only the approver's device confirms them; any-device takes a confirmation from any paired
device (so the requester approves their own request).
evidence-unchecked (device) takes any evidence_ref, an empty one too: the agent confirms its own request
without the device. asks-first (terminal) checks the path only when acting: the person is asked about a
path that must never be allowed (outside the root, the root itself), which is refused only after their yes.
type-ahead (terminal) reads the answer without first throwing away what was typed before the question: a
`y` already waiting in the terminal's input (typed ahead, pasted, left from an earlier question) approves
a question nobody has read yet.
`--journal` (terminal) writes every call to `.gate/journal.jsonl` in the root before its person is asked, as
an approval proxy keeps its own log of calls (a database's write-ahead log, a ledger): it changes on every
call, approved or not, and is no action. `--journal sqlite` keeps it as toolpermit keeps its audit log: a
SQLite database in WAL mode (`.gate/journal.db`, its `-wal` and `-shm`), whose log reaches the database
file only at a checkpoint, here every eighth call: so the file itself first moves under a later call than
the log does.
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
import sqlite3
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
import serving  # noqa: E402
from ask_terminal import DISCARDS, ask_terminal  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402
from race_gate import RaceGate, announced  # noqa: E402

CHANNELS = ("webhook", "device", "terminal", "signed")
# --journal sqlite: the calls between two checkpoints of the gate's log (its file moves at each).
JOURNAL_CHECKPOINT_EVERY = 8
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
    "unsigned",
    "any-device",
    "asks-first",
    "evidence-unchecked",
    "type-ahead",
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


def _in_chat(path: str, flaws: Collection[str]) -> str:
    """The path in the webhook's text, which a chat app shows as Markdown: escaped, in a code span."""
    named = _named(path, flaws)
    if named != _shown(path):
        return named  # a flaw's own way of showing it
    fence = "`" * (max((len(run) for run in re.findall("`+", named)), default=0) + 1)
    pad = " " if named[:1] in ("`", " ") or named[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{named}{pad}{fence}"


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
        # --devices 2: a second paired device (the requester's own laptop): it sees the cards, never approves.
        self.other_pairing: str | None = None
        self.owner_key = os.environ.get("ELSEWHERE_OWNER_KEY", "")
        self.api: str | None = None
        # Who approves (the webhook goes to them), and every user of the approval system by token.
        self.approver = approver
        self.users = _users(os.environ.get("ELSEWHERE_USERS", "")) if approver else {}
        # Where the person's link is served when the server runs over HTTP: its own address, as told.
        self.public = os.environ.get("ELSEWHERE_PUBLIC_URL", "").rstrip("/") or None
        # --fields two (signed): the challenge and the signature come back as two arguments.
        self.two_fields = False
        # --ticket: the open change tickets, each with the request staged under it ("" none yet).
        self.tickets: dict[str, str] | None = None
        # --discard (terminal): how what was typed before the question is thrown away.
        self.discard = "flush"
        # --journal: the gate's own log of every call, written before its person is asked.
        self.journal: Path | None = None
        # --journal sqlite: the same log in a database in WAL mode, and the calls it has logged.
        self.journal_db: sqlite3.Connection | None = None
        self.journaled = 0

    def write_journal(self, path: str) -> None:
        """Log a call as a proxy logs it: a line for every call, whatever its person says."""
        entry = json.dumps({"at": time.time(), "tool": "delete_file", "path": path})
        if self.journal_db is not None:
            with self.lock:
                self.journal_db.execute("INSERT INTO calls (entry) VALUES (?)", (entry,))
                self.journal_db.commit()
                self.journaled += 1
                if self.journaled % JOURNAL_CHECKPOINT_EVERY == 0:
                    # The log copied into the database file: only now does `journal.db` itself move.
                    self.journal_db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        elif self.journal is not None:
            with self.lock, self.journal.open("a", encoding="utf-8") as log:
                log.write(entry + "\n")

    def open_journal(self, kind: str) -> None:
        """The gate's log of calls in the root: a JSON line a call, or a SQLite database in WAL mode."""
        folder = self.root / ".gate"
        folder.mkdir(exist_ok=True)
        if kind == "sqlite":
            db = sqlite3.connect(folder / "journal.db", check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints are the gate's own (write_journal)
            db.execute("CREATE TABLE IF NOT EXISTS calls (entry TEXT)")
            db.commit()
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the table in the file before any call
            self.journal_db = db
        else:
            self.journal = folder / "journal.jsonl"
            self.journal.touch()

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

    def approve(self, rid: str, key: str, authorization: str | None) -> tuple[int, dict[str, Any]]:
        """The person follows the approve link: its status and body."""
        rearms = "link-rearms" in self.flaws  # FLAW link-rearms: the link is never spent
        try:
            request = self.requests.get(rid) if rearms else self.live(rid)
            if request is None:
                raise ValueError("refused: no such request")
        except ValueError as exc:
            return 409, {"error": str(exc)}
        if "agent-reachable" not in self.flaws and not hmac.compare_digest(key, request["secret"]):
            return 403, {"error": "bad key"}
        if (refused := self.who_approves(authorization)) is not None:
            return 403, {"error": refused}
        request["approved"] = True
        if rearms:
            self.spent.discard(rid)  # followed again, it approves the spent request again
        return 200, {"approved": rid}

    def link(self, staged: dict[str, Any]) -> str:
        """The approve link sent to the person (agent-reachable: without its secret)."""
        base = f"{self.public or self.api}/approve/{staged['request_id']}"
        return base if "agent-reachable" in self.flaws else f"{base}?key={staged['secret']}"

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
    if "check-then-spend" in gate.flaws:
        server.middleware.append(announced)  # the width of a race its gate holds open (race_gate.py)
    channel, flaws = gate.channel, gate.flaws

    if gate.public:
        # The person's link is served beside /mcp, at the address the server was told it has.
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response

        @server.custom_route("/approve/{rid}", methods=["POST"])
        async def approve(request: Request) -> Response:
            status, body = gate.approve(
                request.path_params["rid"],
                request.query_params.get("key", ""),
                request.headers.get("Authorization"),
            )
            return JSONResponse(body, status_code=status)

    if channel == "webhook" and gate.tickets is not None:
        _ticketed(server, gate)
    elif channel == "webhook":

        @server.tool(annotations=_DESTRUCTIVE)
        def delete_file(path: str) -> str:
            """Stage deleting one file; a person approves it from the link sent to them."""
            staged = gate.stage(path)
            link = gate.link(staged)
            body = {
                "request_id": staged["request_id"],
                "text": f"Delete {_in_chat(path, flaws)}?",
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
            unchecked = "evidence-unchecked" in flaws  # FLAW evidence-unchecked: any evidence_ref will do
            if evidence_ref not in wanted - {None} and not unchecked:
                raise ValueError("refused: no device evidence for this request")
            return gate.act(request_id)

    elif channel == "terminal":

        @server.tool(annotations=_DESTRUCTIVE)
        def delete_file(path: str) -> str:
            """Delete one file once the person at the server's terminal says y."""
            gate.write_journal(path)
            # FLAW asks-first: the path is checked only when acting, so the person is asked about any.
            seen = None if "asks-first" in flaws else gate.target(path).identity
            named = _named(path, flaws)
            # FLAW type-ahead: the terminal's input is read as it is, a line typed before the question too.
            discard = None if "type-ahead" in flaws else gate.discard
            answer = ask_terminal(f"Delete {named}? allow? [y/N] ", gate.ttl, discard=discard)
            if answer is None and "fails-open" in flaws:
                answer = True  # FLAW fails-open: nobody to ask (or nobody answered) reads as a yes
            if not answer:
                raise ValueError("refused: the person at the terminal did not approve")
            gate.delete(path, seen)
            return f"deleted {_shown(path)}"

    elif gate.two_fields:

        @server.tool(annotations=_DESTRUCTIVE)
        def delete_file(path: str, challenge: str = "", approval: str = "") -> str:
            """Delete one file once its owner signed the challenge for it: send the challenge and the signature."""
            if not challenge:
                return _challenge(gate, path)
            try:
                said = json.loads(challenge)
            except ValueError:
                raise ValueError("refused: the challenge is not the one handed out") from None
            if not approval and "agent-reachable" in flaws:
                # FLAW agent-reachable: the signature is checked only when one is sent.
                approval = sign(gate.owner_key, _canonical(said))
            return _signed(gate, path, said, approval)

    else:

        @server.tool(annotations=_DESTRUCTIVE)
        def delete_file(path: str, approval: str = "") -> str:
            """Delete one file once its owner signed the challenge for it."""
            if not approval:
                return _challenge(gate, path)
            try:
                signed = json.loads(approval)
                if "agent-reachable" in flaws and "nonce" in signed:
                    # The challenge it handed the agent, taken back as if the owner had signed it.
                    signed = {"challenge": signed, "signature": sign(gate.owner_key, _canonical(signed))}
                challenge, signature = signed["challenge"], signed["signature"]
            except (ValueError, KeyError, TypeError):
                raise ValueError("refused: the approval is not a signed challenge") from None
            return _signed(gate, path, challenge, signature)

    return server


def _challenge(gate: Gate, path: str) -> str:
    """The challenge naming this deletion, for the owner to sign."""
    staged = gate.stage(path)
    challenge = {"action": "delete_file", "path": path, "nonce": staged["request_id"]}
    return json.dumps({"status": "approval_required", "challenge": challenge})


def _signed(gate: Gate, path: str, challenge: Any, signature: Any) -> str:
    """Delete `path` if `challenge` is signed by the owner and names it."""
    flaws = gate.flaws
    if not isinstance(challenge, dict):
        raise ValueError("refused: the approval is not a signed challenge")
    key = gate.owner_key
    if not key or not hmac.compare_digest(sign(key, _canonical(challenge)), str(signature)):
        raise ValueError("refused: not signed by the owner")
    if challenge.get("path") != path and "transplant" not in flaws:
        raise ValueError("refused: that approval is for another file")
    return gate.act(
        str(challenge.get("nonce")), str(challenge.get("path")) if "transplant" not in flaws else path
    )


def _ticketed(server: MCPServer, gate: Gate) -> None:
    """--ticket: a change ticket names the file; the staging and the executing call both name the ticket."""
    tickets = gate.tickets
    assert tickets is not None
    paths_of: dict[str, str] = {}

    def where(home: str, notify: str, profile: str) -> None:
        """Each call says where it stands: the server's root, its webhook's base, the folder of this script.

        A change system that checks the caller's context: an unfilled `{root}`, `{sink}` or
        `{profile_dir}` in a profile's args is refused, so its honest flow cannot complete.
        """
        if not os.path.isdir(home) or not os.path.samefile(home, gate.root):
            raise ValueError(f"refused: home {home!r} is not this server's root")
        if not notify.startswith("http://") or not (gate.webhook or "").startswith(notify.rstrip("/") + "/"):
            raise ValueError(f"refused: notify {notify!r} is not the base of this server's webhook")
        script = Path(profile) / "elsewhere" / "server.py"
        if not script.is_file() or not os.path.samefile(script, __file__):
            raise ValueError(f"refused: profile {profile!r} is not the folder this server is in")

    @server.tool()
    def open_ticket(path: str, home: str, notify: str, profile: str) -> dict[str, str]:
        """Open a change ticket for deleting one file (nothing is deleted yet), from where the caller stands."""
        where(home, notify, profile)
        gate.target(path)
        ticket = f"T-{secrets.token_hex(4)}"
        tickets[ticket], paths_of[ticket] = "", path
        return {"ticket_id": ticket}

    @server.tool(annotations=_DESTRUCTIVE)
    def delete_file(ticket: str, home: str, notify: str, profile: str) -> str:
        """Stage the deletion a change ticket names; a person approves it from the link sent to them."""
        where(home, notify, profile)
        if tickets.get(ticket) != "":
            raise ValueError("refused: no open ticket by that id")
        path = paths_of[ticket]
        staged = gate.stage(path)
        tickets[ticket] = staged["request_id"]
        body = {"request_id": staged["request_id"], "text": f"Delete {_shown(path)}?"}
        _post(gate.webhook, {**body, "approve_url": gate.link(staged)})
        return json.dumps({"status": "pending_approval", "request_id": staged["request_id"]})

    @server.tool(annotations=_DESTRUCTIVE)
    def execute_request(request_id: str, ticket: str, profile: str) -> str:
        """Delete the file of an approved request, under the ticket it was staged with, from this folder."""
        script = Path(profile) / "elsewhere" / "server.py"
        if not script.is_file() or not os.path.samefile(script, __file__):
            raise ValueError(f"refused: profile {profile!r} is not the folder this server is in")
        if tickets.get(ticket) != request_id:
            raise ValueError("refused: that request was not staged under this ticket")
        if not gate.live(request_id)["approved"]:
            raise ValueError("refused: not approved")
        return gate.act(request_id)


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
                    key = dict(p.partition("=")[::2] for p in query.split("&") if p).get("key", "")
                    return self._reply(*gate.approve(parts[1], key, self.headers.get("Authorization")))
                if parts[0] == "cards" and len(parts) == 3 and parts[2] == "confirm":
                    self._signed(raw, approves=True)
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

        def _signed(self, body: bytes, approves: bool = False) -> None:
            if "unsigned" in gate.flaws:
                return  # FLAW unsigned: a kiosk that takes any request as its paired device's
            said = self.headers.get("X-Device-Signature", "")
            message = f"{self.command} {self.path} " + body.decode()
            if hmac.compare_digest(said, sign(gate.pairing, message)):
                return
            other = gate.other_pairing
            if other is not None and hmac.compare_digest(said, sign(other, message)):
                if approves and "any-device" not in gate.flaws:  # FLAW any-device: any paired device approves
                    raise PermissionError("that device is paired, but it is not the approver's device")
                return
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
    parser.add_argument(
        "--webhook",
        default=os.environ.get("ELSEWHERE_WEBHOOK"),
        help="where the link goes (ELSEWHERE_WEBHOOK)",
    )
    parser.add_argument("--ttl", type=float, default=30.0)
    parser.add_argument("--approver", help="webhook: the user the approval is sent to (ELSEWHERE_USERS)")
    parser.add_argument("--flaw", action="append", choices=FLAWS, default=[])
    parser.add_argument("--late-first-redeem", type=float, default=0.0, metavar="SECONDS")
    parser.add_argument("--port", type=int, help="serve Streamable HTTP on 127.0.0.1:PORT (stdio without)")
    parser.add_argument(
        "--fields",
        choices=("one", "two"),
        default="one",
        help="signed: the approval in one JSON field or two",
    )
    parser.add_argument(
        "--ticket", action="store_true", help="webhook: open_ticket first, named by both calls"
    )
    parser.add_argument(
        "--devices",
        type=int,
        choices=(1, 2),
        default=1,
        help="device: 2 pairs a second device too (the requester's own), which sees cards but never approves",
    )
    parser.add_argument(
        "--journal",
        nargs="?",
        const="jsonl",
        choices=("jsonl", "sqlite"),
        help="terminal: log every call in the root before asking (the gate's own log): .gate/journal.jsonl, "
        "or .gate/journal.db in WAL mode",
    )
    parser.add_argument(
        "--discard",
        choices=DISCARDS,
        default="flush",
        help="terminal: how what was typed before the question is thrown away (flushed, or read and dropped)",
    )
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
    if args.ticket:
        gate.tickets = {}
    gate.two_fields = args.fields == "two"
    gate.discard = args.discard
    if args.journal:
        gate.open_journal(args.journal)
    if args.channel in ("webhook", "device"):
        _serve_api(gate)
    if args.channel == "device":
        print(f"device api {gate.api}", file=sys.stderr, flush=True)
        print(f"pairing code {gate.pairing}", file=sys.stderr, flush=True)
        if args.devices == 2:
            gate.other_pairing = f"{secrets.randbelow(10**6):06d}"
            print(f"requester's laptop paired too: code {gate.other_pairing}", file=sys.stderr, flush=True)
    # A refusal raised from a tool is logged with its traceback; the SDK's default handler renders it
    # with rich (syntax-highlighted frames), a CPU-heavy render serialised behind the logging lock, so on
    # a loaded machine a burst of refused redemptions queued behind it for seconds each. A plain handler
    # says the same in microseconds (the SDK's own basicConfig then leaves it in place).
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    server = build(gate)
    if args.port is not None:
        serving.serve_http(server, args.port, log_level="warning")
    else:
        server.run()


if __name__ == "__main__":
    main()
