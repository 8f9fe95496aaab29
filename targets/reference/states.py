"""What round 1 hands the client as `requestState`, and what round 2 makes of it.

Careful (`SealedState`): readable JSON the SDK's `RequestStateBoundary` seals on the wire
and binds to the tool and its arguments; the nonce in it is spent in the ledger. `--state
signed` (`SignedState`) does the same without the SDK: an HMAC over readable JSON that
names the tool and an argument digest. The other schemes are flaws, each removing one
part of that: the seal (`PlainState`), the binding (`UnboundState`) or the reading of the
state at all (`TrustingState`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import ledger as ledgers
import paths

__all__ = [
    "Approval",
    "Call",
    "PlainState",
    "Recorded",
    "Scheme",
    "SealedState",
    "SignedState",
    "TrustingState",
    "UnboundState",
]

_MALFORMED = "malformed confirmation state"


@dataclass(frozen=True, slots=True)
class Call:
    """The tools/call being answered, as it came over the wire: what a state is bound to."""

    tool: str
    arguments: Mapping[str, Any]
    path_arg: str = "path"

    @property
    def canonical(self) -> str:
        return _canonical(self.arguments)

    @property
    def others(self) -> dict[str, Any]:
        """Every argument but the path: what binds a state that names its file separately."""
        return {k: v for k, v in self.arguments.items() if k != self.path_arg}

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.canonical.encode()).hexdigest()


class Approval(Protocol):
    def expected(self, target: paths.Target) -> paths.Identity:
        """The identity the user was asked about; Refused if the state was for another file."""
        ...


@dataclass(frozen=True, slots=True)
class Recorded:
    """A state that names the file it was minted for."""

    path: str  # relative to the root; absolute real path when `absolute`
    identity: paths.Identity | None  # None: plain-state carries none, today's file is taken
    absolute: bool = False

    def expected(self, target: paths.Target) -> paths.Identity:
        if self.path != (str(target.real) if self.absolute else target.rel):
            raise paths.Refused("the confirmation was for a different file")
        return self.identity if self.identity is not None else target.identity


class Scheme(Protocol):
    async def mint(self, call: Call, target: paths.Target) -> str: ...

    async def redeem(self, state: str, call: Call) -> Approval:
        """Verify and spend `state` for `call`; Refused when it does not hold."""
        ...


def _canonical(value: object) -> str:
    # Sorted, compact, ASCII: the spelling the SDK's own binding digests.
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _identity_json(ident: paths.Identity) -> dict[str, int]:
    return {"dev": ident.dev, "ino": ident.ino, "size": ident.size, "mtime_ns": ident.mtime_ns}


def _identity_of(data: object) -> paths.Identity:
    if not isinstance(data, Mapping):
        raise TypeError("identity")
    return paths.Identity(**{k: int(data[k]) for k in paths.Identity.__slots__})


def _parse(text: str | bytes) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        raise paths.Refused(_MALFORMED) from None
    if not isinstance(data, dict) or not isinstance(data.get("nonce"), str):
        raise paths.Refused(_MALFORMED)
    return data


def _named(data: Mapping[str, Any], *, need_identity: bool) -> tuple[str, paths.Identity | None]:
    """The path and identity a state names; Refused when either is missing or mistyped."""
    path, ident = data.get("path"), data.get("identity")
    if not isinstance(path, str) or (ident is None and need_identity):
        raise paths.Refused(_MALFORMED)
    try:
        return path, None if ident is None else _identity_of(ident)
    except (ValueError, TypeError, KeyError):
        raise paths.Refused(_MALFORMED) from None


async def _spend(ledger: ledgers.Ledger, nonce: str) -> None:
    if not await ledger.spend(nonce):
        raise paths.Refused("confirmation already used or unknown")


async def _new_nonce(ledger: ledgers.Ledger) -> str:
    nonce = secrets.token_urlsafe(16)
    await ledger.issue(nonce)
    return nonce


class SealedState:
    """Careful: the SDK's boundary seals this JSON and binds it to the tool and arguments."""

    def __init__(self, ledger: ledgers.Ledger) -> None:
        self._ledger = ledger

    async def mint(self, call: Call, target: paths.Target) -> str:
        nonce = await _new_nonce(self._ledger)
        return json.dumps({"nonce": nonce, "path": target.rel, "identity": _identity_json(target.identity)})

    async def redeem(self, state: str, call: Call) -> Approval:
        data = _parse(state)
        path, identity = _named(data, need_identity=True)
        await _spend(self._ledger, data["nonce"])
        return Recorded(path, identity)


class PlainState:
    """FLAW plain-state: unsealed JSON, so the client can read and edit it.

    It still names the tool and the other arguments (the SDK's binding, done by hand),
    so what an edit buys is exactly what the seal protected: the file it names.
    """

    def __init__(self, ledger: ledgers.Ledger) -> None:
        self._ledger = ledger

    async def mint(self, call: Call, target: paths.Target) -> str:
        nonce = await _new_nonce(self._ledger)
        return json.dumps(
            {"path": str(target.real), "nonce": nonce, "tool": call.tool, "others": call.others}
        )

    async def redeem(self, state: str, call: Call) -> Approval:
        data = _parse(state)
        path, identity = _named(data, need_identity=False)
        await _spend(self._ledger, data["nonce"])
        if data.get("tool") != call.tool or _canonical(data.get("others")) != _canonical(call.others):
            raise paths.Refused("the confirmation was for another call")
        return Recorded(path, identity, absolute=True)


class SignedState:
    """`--state signed`: base64url(JSON) "." base64url(HMAC-SHA256(key, JSON)), no SDK boundary.

    The JSON is readable but any edit breaks the signature; it names the tool and a
    digest of the canonical arguments, so it serves only the call it was minted for, and
    the authenticated principal it was asked of (`principal`, None without auth), as the
    SDK's boundary would. `principal=None` is the principal-unbound-state flaw.
    """

    def __init__(
        self, ledger: ledgers.Ledger, key: bytes, ttl: float, principal: Callable[[], str | None] | None
    ) -> None:
        self._ledger = ledger
        self._key = key
        self._ttl = ttl
        self._principal = principal

    async def mint(self, call: Call, target: paths.Target) -> str:
        claims = {
            "nonce": await _new_nonce(self._ledger),
            "path": target.rel,
            "identity": _identity_json(target.identity),
            "tool": call.tool,
            "args": call.digest,
            # The SDK's seal expires; so does this, even with the no-ledger flaw.
            "exp": time.time() + self._ttl,
        }
        if self._principal is not None and (principal := self._principal()) is not None:
            claims["sub"] = principal  # only with auth: without it there is no one to bind
        body = json.dumps(claims, sort_keys=True, separators=(",", ":")).encode()
        return f"{_b64u(body)}.{_b64u(self._sign(body))}"

    async def redeem(self, state: str, call: Call) -> Approval:
        data = _parse(self._verified(state))
        if data.get("tool") != call.tool or data.get("args") != call.digest:
            raise paths.Refused("the confirmation was for another call")
        # FLAW principal-unbound-state (no principal callable): whoever presents it may redeem it.
        if self._principal is not None and data.get("sub") != self._principal():
            raise paths.Refused("the confirmation was asked of another user")
        exp = data.get("exp")
        if not isinstance(exp, int | float) or not time.time() < exp:
            raise paths.Refused("the confirmation has expired")
        path, identity = _named(data, need_identity=True)
        await _spend(self._ledger, data["nonce"])
        return Recorded(path, identity)

    def _sign(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()

    def _verified(self, state: str) -> bytes:
        """The JSON bytes, only once the signature over exactly those bytes holds."""
        body_text, dot, tag_text = state.partition(".")
        try:
            body, tag = _b64u_decode(body_text), _b64u_decode(tag_text)
        except ValueError:
            raise paths.Refused(_MALFORMED) from None
        if not dot or not hmac.compare_digest(tag, self._sign(body)):
            raise paths.Refused("the confirmation state's signature does not verify")
        return body


def _b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _b64u_decode(text: str) -> bytes:
    """Only the canonical unpadded spelling decodes: one state, one text."""
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url") from None
    if not text or _b64u(raw) != text:
        raise ValueError("non-canonical base64url")
    return raw


@dataclass(slots=True)
class _AskedAbout:
    """unbound-state's approval: identity only if this very path was asked about."""

    asked: dict[str, paths.Identity]

    def expected(self, target: paths.Target) -> paths.Identity:
        # FLAW unbound-state: no record for this path (another file) means no comparison.
        return self.asked.pop(str(target.real), target.identity)


class UnboundState:
    """FLAW unbound-state: the state is {"nonce": ...} and names no file, tool or argument.

    The ledger still makes it single use, but the handler acts on the call's own
    arguments, whatever question the nonce was minted for.
    """

    def __init__(self, ledger: ledgers.Ledger) -> None:
        self._ledger = ledger
        self._asked: dict[str, paths.Identity] = {}  # resolved path -> identity asked about

    async def mint(self, call: Call, target: paths.Target) -> str:
        self._asked[str(target.real)] = target.identity
        return json.dumps({"nonce": await _new_nonce(self._ledger)})

    async def redeem(self, state: str, call: Call) -> Approval:
        await _spend(self._ledger, _parse(state)["nonce"])
        return _AskedAbout(self._asked)


@dataclass(frozen=True, slots=True)
class _Question:
    path: str
    identity: paths.Identity
    expires: float


class TrustingState:
    """FLAW trusting-state: any state that is present is taken as proof the question was asked.

    What was asked is kept server-side per (tool, canonical arguments) and spent on use,
    so replay, another file, an added argument and another tool are still refused;
    only the state's own authenticity is never checked.
    """

    def __init__(self, ttl: float) -> None:
        self._ttl = ttl
        self._asked: dict[tuple[str, str], _Question] = {}

    async def mint(self, call: Call, target: paths.Target) -> str:
        now = time.time()
        self._asked = {k: q for k, q in self._asked.items() if q.expires > now}  # bounded by live ones
        self._asked[(call.tool, call.canonical)] = _Question(target.rel, target.identity, now + self._ttl)
        # Shaped like the SDK's sealed token, so every byte-level forgery of it applies;
        # 52 bytes leave spare low bits in the last base64 character, as sealed tokens may.
        return "v1." + _b64u(secrets.token_bytes(52))

    async def redeem(self, state: str, call: Call) -> Approval:
        # One dict pop, no await before it: of two redemptions, exactly one finds the record.
        question = self._asked.pop((call.tool, call.canonical), None)
        if question is None or question.expires <= time.time():
            raise paths.Refused("no question was asked for this call")
        return Recorded(question.path, question.identity)
