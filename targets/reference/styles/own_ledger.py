"""A style with single-use state of its own: consumed tickets, and refusal texts unlike ours.

Where the default server issues a nonce and spends it from a ledger of outstanding
ones, this one writes a ticket (an id, the file, its identity, an expiry) into the
state the SDK seals, and remembers the tickets it has *consumed* until they expire.
Checking and recording a ticket is one dictionary operation with no await between,
so of two redemptions exactly one gets through. Its refusals are errors in words of
its own: "That confirmation has been consumed.", "Request declined by operator.".
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import paths
import prompt
import states
from mcp.server.mcpserver.exceptions import ToolError

from .style import VERBS, Effect, Style

CONSUMED = "That confirmation has been consumed."
DECLINED = "Request declined by operator."


def _question(shown: str, form: str, effect: Effect, named: bool) -> str:
    how = prompt.how_to_answer(form, VERBS[effect])
    if not named:
        return f"Approve a {effect} request? {how}"  # FLAW question-without-name
    return f'Approve {effect} request for "{shown}"? {how}'


def _not_confirmed(effect: Effect, why: str) -> str:
    if why == "keep":
        raise ToolError("Request rejected in the form; no change made.")
    raise ToolError(DECLINED)


def _done(effect: Effect, shown: str, size: int) -> str:
    return f'Request complete: {effect} "{shown}" ({size} bytes).'


STYLE = Style(prompt.DOUBLE_QUOTED, _question, _not_confirmed, _done, own_state=True)


@dataclass(frozen=True, slots=True)
class _Ticket:
    file: str
    identity: paths.Identity

    def expected(self, target: paths.Target) -> paths.Identity:
        if target.rel != self.file:
            raise paths.Refused("That confirmation belongs to another request.")
        return self.identity


class Tickets:
    """The state is a ticket; a redeemed ticket is remembered as consumed until it expires."""

    def __init__(self, ttl: float, *, record: bool = True, clock: Callable[[], float] = time.time) -> None:
        self._ttl = ttl
        self._record = record
        self._clock = clock
        self._consumed: dict[str, float] = {}  # ticket id -> when it would have expired

    async def mint(self, call: states.Call, target: paths.Target) -> str:
        ident = target.identity
        ticket = {
            "ticket": secrets.token_hex(12),
            "file": target.rel,
            "inode": [ident.dev, ident.ino, ident.size, ident.mtime_ns],
            "until": self._clock() + self._ttl,
        }
        return json.dumps(ticket)

    async def redeem(self, state: str, call: states.Call) -> states.Approval:
        ticket = _read(state)
        now = self._clock()
        if not now < ticket["until"]:
            raise paths.Refused("That confirmation has lapsed.")
        self._consumed = {t: until for t, until in self._consumed.items() if until > now}
        if ticket["ticket"] in self._consumed:
            raise paths.Refused(CONSUMED)
        if self._record:  # FLAW no-ledger: nothing is remembered, so a ticket serves again
            self._consumed[ticket["ticket"]] = ticket["until"]
        dev, ino, size, mtime_ns = ticket["inode"]
        return _Ticket(ticket["file"], paths.Identity(dev, ino, size, mtime_ns))


def _read(state: str) -> Mapping[str, Any]:
    try:
        data = json.loads(state)
        valid = (
            isinstance(data["ticket"], str)
            and isinstance(data["file"], str)
            and isinstance(data["until"], int | float)
            and len(data["inode"]) == 4
            and all(isinstance(n, int) for n in data["inode"])
        )
    except (ValueError, TypeError, KeyError):
        valid = False
    if not valid:
        raise paths.Refused("That confirmation could not be read.")
    return data  # type: ignore[no-any-return]
