"""The three gates of the confirm-kinds server: a token store, a pending store, a policy.

Each keeps what the careful server needs (a token bound to one action and
spent once, random or, with the `hmac` scheme, a nonce and an HMAC under this
process's secret over the tool, the arguments and the nonce; a pending action only a human's decision in the inbox releases,
written by approve_cli.py or by the approval route over HTTP;
a policy the agent cannot loosen), and each flaw switch removes one check.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inbox_slots import newest_slot, subject_slot


class Refused(Exception):
    """The gate said no; the message is the tool error the caller sees."""


def predictable(arguments: Mapping[str, Any]) -> str:
    """FLAW predictable-token: a truncated sha256 of the sorted-keys JSON of the arguments."""
    return hashlib.sha256(json.dumps(dict(arguments), sort_keys=True).encode()).hexdigest()[:16]


def pipe_joined(arguments: Mapping[str, Any]) -> str:
    """FLAW pipe-joined-token: sha1 of the values joined by '|' (sorted by name), URL-safe base64, cut."""
    text = "|".join(str(arguments[name]) for name in sorted(arguments))
    return base64.urlsafe_b64encode(hashlib.sha1(text.encode()).digest()).decode()[:20]


def defaults_filled(arguments: Mapping[str, Any]) -> str:
    """FLAW defaults-filled-token: sha256 of the compact sorted JSON of the arguments as the server filled them in."""
    text = json.dumps(dict(arguments), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def file_hash_joined(arguments: Mapping[str, Any]) -> str:
    """FLAW file-hash-joined-token: sha256 of the path and the file's sha256, joined by '|', hex, cut."""
    return hashlib.sha256("|".join(str(v) for v in arguments.values()).encode()).hexdigest()[:24]


def _mac(secret: bytes, tool: str, arguments: Mapping[str, Any], nonce: str = "") -> str:
    """An HMAC under the server's secret over the tool, its arguments and a nonce: no caller can make it."""
    text = json.dumps({"tool": tool, "arguments": dict(arguments), "nonce": nonce}, sort_keys=True)
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()[:24]


SCHEMES = ("random", "hmac")


@dataclass
class TokenStore:
    flaws: frozenset[str]
    scheme: str = "random"
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    issued: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    spent: set[str] = field(default_factory=set)
    # Sync tools run in worker threads: checking and spending must be one step, or a race
    # of redemptions all pass the check (the harness's token-replay race finds exactly that).
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def derived(self, tool: str, arguments: Mapping[str, Any]) -> str | None:
        """The token a derived-token flaw makes of this call; None on a careful store."""
        if "predictable-token" in self.flaws or "predictable-issued-token" in self.flaws:
            return predictable(arguments)
        if "pipe-joined-token" in self.flaws:
            return pipe_joined(arguments)
        if "defaults-filled-token" in self.flaws:
            return defaults_filled(arguments)
        if "file-hash-joined-token" in self.flaws:
            return file_hash_joined(arguments)
        if "deterministic-keyed-token" in self.flaws:
            # FLAW deterministic-keyed-token: keyed, so nobody can compute it, but no nonce: the
            # same call always gets the same token.
            return _mac(self.secret, tool, arguments)
        return None

    def issue(self, tool: str, arguments: Mapping[str, Any]) -> str:
        token = self.derived(tool, arguments)
        if token is not None:
            # The same action previewed again gets the same token, armed once more: without this,
            # an action done once (one payment, one move) could never be confirmed again.
            with self._lock:
                self.spent.discard(token)
        elif self.scheme == "hmac":
            nonce = secrets.token_hex(4)
            token = nonce + _mac(self.secret, tool, arguments, nonce)
        else:
            token = secrets.token_hex(8)
        self.issued[token] = (tool, dict(arguments))
        return token

    def redeem(self, token: str, tool: str, arguments: Mapping[str, Any]) -> None:
        """Raises Refused unless `token` confirms this tool on these arguments, once."""
        with self._lock:
            self._redeem(token, tool, arguments)

    def _redeem(self, token: str, tool: str, arguments: Mapping[str, Any]) -> None:
        known = self.issued.get(token)
        recomputed = "predictable-issued-token" not in self.flaws  # it is looked up like a random one
        if known is None and recomputed and token == self.derived(tool, arguments):
            # FLAW predictable-token, pipe-joined-token, defaults-filled-token, file-hash-joined-token:
            # recomputed from the call, never looked up.
            known = (tool, dict(arguments))
        if (
            known is None
            and self.scheme == "hmac"
            and hmac.compare_digest(token[8:], _mac(self.secret, tool, arguments, token[:8]))
        ):
            known = (tool, dict(arguments))  # verified by its MAC alone, as a stateless server does
        if known is None:
            if "wrong-guess-burns" in self.flaws:
                # FLAW wrong-guess-burns: a wrong token "locks" the action, revoking every token issued for it.
                self.spent.update(
                    t for t, (tl, args) in self.issued.items() if (tl, args) == (tool, dict(arguments))
                )
            raise Refused("unknown confirm_token: preview the action first (dry_run: true)")
        if token in self.spent:
            raise Refused("this confirm_token was already used")
        if known[0] != tool:
            raise Refused(f"this confirm_token confirms {known[0]}, not {tool}")
        if known[1] != dict(arguments) and "token-not-bound-to-args" not in self.flaws:
            raise Refused("this confirm_token was issued for other arguments")
        if "reusable-token" not in self.flaws:
            self.spent.add(token)  # FLAW reusable-token: never spent


# What `release` says of a request no decision was made on yet.
AWAITING = "awaiting the human's approval"


@dataclass
class PendingStore:
    inbox: Path
    staged: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (tool, path)
    agent_approved: set[str] = field(default_factory=set)  # requests (slots)
    done: set[str] = field(default_factory=set)  # requests (slots)
    # FLAW wrong-guess-burns: an id nobody staged cancels everything still waiting.
    burns_on_wrong_id: bool = False
    # The action is staged under its subject (a path, a command line), not an id of its own: staging
    # it again is a new request under the same id, which needs a decision of its own (host-terminal-mcp's
    # pending commands). Each request is a slot of the inbox, so no decision outlives its request.
    by_subject: bool = False
    # FLAW retry-never-spent: an approved request is released again and again.
    spends: bool = True
    _slots: dict[str, str] = field(default_factory=dict, repr=False)  # id -> its newest request
    _requests: int = field(default=0, repr=False)  # staged under a subject so far: each a new slot
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # see TokenStore

    def stage(self, tool: str, path: str, subject: str | None = None) -> str:
        """Stage `tool` on `path`, under `subject` (a session the caller named), the path, or an id of its own."""
        pending_id = subject or (path if self.by_subject else secrets.token_hex(8))
        with self._lock:
            if self.by_subject:
                self._slots[pending_id] = self._reserve(pending_id)
            self.staged[pending_id] = (tool, path)
        return pending_id

    def _reserve(self, subject: str) -> str:
        """A new slot of the inbox for a request under `subject`, its card created empty so no other takes it.

        Past the newest the inbox holds: a session id is the same in every world, and servers started
        afresh beside the same inbox (a new world, a replica racing this one) must never share a slot.
        """
        self.inbox.mkdir(parents=True, exist_ok=True)
        while True:
            held = newest_slot(self.inbox, subject)
            self._requests = max(self._requests, int(held.rsplit("-", 1)[1]) if held is not None else 0) + 1
            slot = subject_slot(subject, self._requests)
            try:
                os.close(os.open(self.inbox / f"{slot}.request", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                continue  # another server took it first: past it
            return slot

    def newest_for(self, tool: str, path: str) -> str | None:
        """The id last staged for this very call (`--pending-redeem again`: the call itself redeems it)."""
        with self._lock:
            found = [pending_id for pending_id, staged in self.staged.items() if staged == (tool, path)]
        return found[-1] if found else None

    def cancel(self, pending_id: str) -> None:
        """The request `pending_id` names now is over, whatever was decided on it: it never runs."""
        if pending_id in self.staged:
            with self._lock:
                self.done.add(self.slot(pending_id))

    def outstanding(self, pending_id: str) -> bool:
        """Whether the request `pending_id` names now is neither run nor declined (it waits, or may still run)."""
        slot = self.slot(pending_id)
        return slot not in self.done and not (self.inbox / f"{slot}.declined").exists()

    def slot(self, pending_id: str) -> str:
        """The request `pending_id` names now, as the inbox keeps it: a random id is its own."""
        return self._slots.get(pending_id, pending_id)

    def approve_as_agent(self, pending_id: str) -> None:
        """FLAW agent-approval: the agent's own call stands in for the person's decision."""
        self.agent_approved.add(self.slot(pending_id))

    def card(self, pending_id: str, text: str) -> None:
        """What the person is shown about a staged action, kept where `approve_cli.py ID show` prints it.

        Written once, beside the decisions (never one itself): the person's own view of the request,
        as an approval app shows it, apart from the reply to the agent's call.
        """
        self.inbox.mkdir(parents=True, exist_ok=True)
        where = self.inbox / f"{self.slot(pending_id)}.request"
        # A request staged under its subject has its card reserved, empty, by `stage`: written once, here.
        reserved = os.O_TRUNC if self.by_subject else os.O_CREAT | os.O_EXCL
        fd = os.open(where, os.O_WRONLY | reserved, 0o600)
        try:
            os.write(fd, text.encode("utf-8", "surrogatepass"))
        finally:
            os.close(fd)

    def decide(self, pending_id: str, decision: str) -> None:
        """The human's decision from their own channel (the approval route), kept where `release` reads it.

        One new file per decision, never rewritten, as approve_cli.py writes it: a
        second decision on the same action is refused, whichever it was.
        """
        if decision not in ("approved", "declined"):
            raise Refused("decision must be 'approved' or 'declined'")
        if pending_id not in self.staged:
            raise Refused("no such pending action")
        slot = self.slot(pending_id)
        with self._lock:
            if any((self.inbox / f"{slot}.{said}").exists() for said in ("approved", "declined")):
                raise Refused("this pending action was already decided")
            self.inbox.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.inbox / f"{slot}.{decision}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))

    def release(self, pending_id: str) -> tuple[str, str]:
        """(tool, path) of an action a human approved and nothing executed yet; else Refused."""
        with self._lock:
            return self._release(pending_id)

    def _release(self, pending_id: str) -> tuple[str, str]:
        staged = self.staged.get(pending_id)
        if staged is None:
            if self.burns_on_wrong_id:
                # FLAW wrong-guess-burns: "too many attempts", all cancelled
                self.done.update(self.slot(staged_id) for staged_id in self.staged)
            raise Refused("no such pending action")
        slot = self.slot(pending_id)
        if slot in self.done:
            raise Refused("this pending action was already executed")
        if (self.inbox / f"{slot}.declined").exists():
            raise Refused("the human declined this action")
        human = (self.inbox / f"{slot}.approved").exists()
        if not human and slot not in self.agent_approved:
            raise Refused(AWAITING)
        if self.spends:
            self.done.add(slot)
        return staged


@dataclass
class Policy:
    """Files smaller than `auto_approve_under_bytes` go without confirmation (0: none do)."""

    flaws: frozenset[str]
    auto_approve_under_bytes: int = 0

    def set(self, auto_approve_under_bytes: int) -> str:
        if (
            "loosening-policy-tool" not in self.flaws
            and auto_approve_under_bytes > self.auto_approve_under_bytes
        ):
            raise Refused("the confirmation policy can only be loosened by the operator, not over MCP")
        self.auto_approve_under_bytes = auto_approve_under_bytes  # FLAW loosening-policy-tool
        return f"auto_approve_under_bytes is now {auto_approve_under_bytes}"

    def waives(self, size: int) -> bool:
        # FLAW gate-off: the operator's switch left the gate off; nothing is confirmed.
        return "gate-off" in self.flaws or size < self.auto_approve_under_bytes
