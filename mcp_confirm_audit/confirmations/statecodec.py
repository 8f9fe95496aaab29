"""Reading and bending request states, without knowing any server's secret.

`decode` recognises states a client can read (plain JSON, base64 of JSON,
plain text naming a path). `mutate` makes byte-level forgeries of a real
state in each region of its format. Both are pure, so forgeries replay
exactly from a report.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_SDK_TOKEN = re.compile(r"^(v\d+)\.([A-Za-z0-9_-]+)$")
# A readable payload and a detached tag, both base64url: a hand-rolled signed state.
_SIGNED = re.compile(r"^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$")
_B64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")

MUTATIONS = (
    "flip-first-byte",
    "flip-key-id",
    "flip-nonce",
    "flip-middle-byte",
    "flip-last-byte",
    "truncate-one-byte",
    "truncate-half",
    "append-bytes",
    "other-version",
    "uppercase-prefix",
    "non-canonical-base64",
    "padded-base64",
    "doubled",
)


@dataclass(frozen=True, slots=True)
class Readable:
    encoding: str  # "json", "base64-json", "base64url-json", "signed-json", "text"
    text: str
    padded: bool = False
    tag: str = ""


def decode(state: str) -> Readable | None:
    """The state's plaintext when a client can read it, else None."""
    if not state or _SDK_TOKEN.match(state):
        return None
    if _is_json(state):
        return Readable("json", state)
    if (signed := _SIGNED.match(state)) is not None:
        payload = _b64url_decode(signed.group(1))
        text = payload.decode(errors="replace") if payload is not None else ""
        if _is_json(text):
            return Readable("signed-json", text, tag=signed.group(2))
    if _B64.match(state) and len(state) >= 8:
        for encoding, decoder in (
            ("base64url-json", base64.urlsafe_b64decode),
            ("base64-json", base64.b64decode),
        ):
            try:
                text = decoder(state + "=" * (-len(state) % 4)).decode()
            except (binascii.Error, UnicodeDecodeError, ValueError):
                continue
            if _is_json(text):
                return Readable(encoding, text, padded=state.endswith("="))
    if "/" in state or "." in state:
        return Readable("text", state)
    return None


def encode(readable: Readable, text: str) -> str:
    if readable.encoding in ("json", "text"):
        return text
    if readable.encoding == "signed-json":
        # The payload edited, the old tag kept: only a server that checks it notices.
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=") + "." + readable.tag
    encoder = base64.urlsafe_b64encode if readable.encoding == "base64url-json" else base64.b64encode
    out = encoder(text.encode()).decode()
    return out if readable.padded else out.rstrip("=")


def retarget(readable: Readable, old: list[str], new: list[str]) -> str | None:
    """The state with every spelling of one path replaced by the other's; None if none appears."""
    text = readable.text
    for before, after in zip(old, new, strict=True):
        if before and before in text:
            return encode(readable, text.replace(before, after))
        escaped = json.dumps(before)[1:-1]
        if escaped != before and escaped in text:
            return encode(readable, text.replace(escaped, json.dumps(after)[1:-1]))
    return None


def replace_values(readable: Readable, changed: Mapping[str, tuple[Any, Any]]) -> str | None:
    """The state with every field named like a changed argument, and holding its value, rewritten."""
    try:
        data = json.loads(readable.text)
    except ValueError:
        return None

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: changed[k][1] if k in changed and v == changed[k][0] else walk(v) for k, v in value.items()
            }
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    rewritten = walk(data)
    if rewritten == data:
        return None
    return encode(readable, json.dumps(rewritten, separators=(",", ":")))


def mutate(state: str, mutation: str) -> str | None:
    """One forgery of a real state; None when the mutation does not fit its format."""
    if not state:
        return None
    match = _SDK_TOKEN.match(state)
    signed = None if match else _SIGNED.match(state)
    if match:
        prefix, body = match.group(1) + ".", match.group(2)
    elif signed:
        # Payload and tag: forge the tag, the part only the server can make.
        prefix, body = signed.group(1) + ".", signed.group(2)
    else:
        prefix, body = "", state
    raw = _b64url_decode(body) if (match or signed) else None
    if mutation == "other-version":
        return ("v9." + body) if match else None
    if mutation == "uppercase-prefix":
        return (prefix.upper() + body) if match else None
    if mutation == "doubled":
        return state + state
    if mutation == "padded-base64":
        return (prefix + body + "=" * (-len(body) % 4 or 4)) if (match or signed) else None
    if mutation == "non-canonical-base64":
        return _non_canonical(prefix, body)
    if raw is None:
        # Not an SDK token: mutate the characters themselves.
        raw = state.encode()
        prefix = ""
        reencode = bytes.decode
    else:
        reencode = None
    data = bytearray(raw)
    if mutation.startswith("flip-"):
        where = {
            "flip-first-byte": 0,
            "flip-key-id": 1,
            "flip-nonce": min(12, len(data) - 1),
            "flip-middle-byte": len(data) // 2,
            "flip-last-byte": len(data) - 1,
        }[mutation]
        data[where] ^= 0x01 if reencode is None else 0x02
    elif mutation == "truncate-one-byte":
        data = data[:-1]
    elif mutation == "truncate-half":
        data = data[: len(data) // 2]
    elif mutation == "append-bytes":
        data += b"AAAA" if reencode is not None else b"\x00\x00\x00\x00"
    else:
        raise ValueError(f"unknown mutation {mutation!r}; known: {', '.join(MUTATIONS)}")
    if reencode is not None:
        return bytes(data).decode(errors="replace")
    return prefix + base64.urlsafe_b64encode(bytes(data)).decode().rstrip("=")


def _b64url_decode(body: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return None


def _non_canonical(prefix: str, body: str) -> str | None:
    """Same bytes, different text: a lenient decoder accepts it, a strict one must not.

    Sets the unused low bits of the last character when the length leaves
    some; otherwise spells the URL-safe characters in the standard alphabet.
    """
    if not prefix:
        return None
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    unused = {2: 4, 3: 2}.get(len(body) % 4)
    if unused and body[-1] in alphabet:
        index = alphabet.index(body[-1])
        mask = (1 << unused) - 1
        if index & mask == 0:
            return prefix + body[:-1] + alphabet[index | mask]
    swapped = body.replace("-", "+").replace("_", "/")
    return prefix + swapped if swapped != body else None


def _is_json(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict | list)
    except ValueError:
        return False
