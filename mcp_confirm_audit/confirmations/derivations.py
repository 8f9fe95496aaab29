"""Derived tokens: which common construction of a call's arguments a confirm token is.

A token the server computes from what the caller sends alone is one the caller
can compute too. `search` tries a small fixed list of constructions against a
token actually seen, in order, and returns the first that reproduces it:

- the text: JSON of the arguments (default or compact separators, keys sorted or
  not; alone, after the tool's name and ':', or wrapped as `{tool|name, arguments}`),
  or the argument values joined by '|', ':' or ',' (in the arguments' order or sorted
  by name; alone or after the tool's name);
- the digest: sha256, sha1, md5, or HMAC with an empty key over each;
- the encoding: hex, base64 or URL-safe base64, cut to the token's length (so a
  cut inside the padding is the same as no padding).

That is `len(candidates(n))` constructions (504), no brute force. It is pure: the
same arguments and token give the same answer, so a finding replays exactly.

The arguments themselves are taken as the call sent them, and as a server may
fill them in first (`views`): with the schema's defaults for the optional fields
the caller left out, and with a value the server derives itself from the subject
(a file's sha256) after them. A construction is found for one view, and a token
is forged with the same view of another call.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Text = Callable[[str, Mapping[str, Any]], str]

DIGESTS = ("sha256", "sha1", "md5", "hmac-sha256", "hmac-sha1", "hmac-md5")
ENCODINGS = ("hex", "base64", "base64url")


def _json(compact: bool, ordered: bool, around: str) -> Text:
    separators = (",", ":") if compact else None

    def text(tool: str, arguments: Mapping[str, Any]) -> str:
        data: Any = dict(arguments)
        if around in ("tool", "name"):
            data = {around: tool, "arguments": data}
        dumped = json.dumps(data, sort_keys=ordered, separators=separators, default=str)
        return f"{tool}:{dumped}" if around == "prefix" else dumped

    return text


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _joined(ordered: bool, with_tool: bool, joiner: str) -> Text:
    def text(tool: str, arguments: Mapping[str, Any]) -> str:
        keys = sorted(arguments) if ordered else list(arguments)
        return joiner.join([*([tool] if with_tool else []), *(_value(arguments[k]) for k in keys)])

    return text


JOINERS = ("|", ":", ",")


def _texts() -> dict[str, Text]:
    texts: dict[str, Text] = {}
    arounds = {
        "": "none",
        " after the tool name and ':'": "prefix",
        ' of {"tool", "arguments"}': "tool",
        ' of {"name", "arguments"}': "name",
    }
    for around_label, around in arounds.items():
        for compact in (False, True):
            for ordered in (True, False):
                label = f"{'compact ' if compact else ''}{'sorted ' if ordered else ''}JSON{around_label}"
                texts[label] = _json(compact, ordered, around)
    for joiner in JOINERS:
        for with_tool in (False, True):
            for ordered in (False, True):
                what = "tool name and values" if with_tool else "values"
                order = "sorted by name" if ordered else "in argument order"
                texts[f"'{joiner}'-joined {what} ({order})"] = _joined(ordered, with_tool, joiner)
    return texts


TEXTS: Mapping[str, Text] = _texts()


def _digest(name: str, data: bytes) -> bytes:
    if name.startswith("hmac-"):
        return hmac.new(b"", data, name.removeprefix("hmac-")).digest()
    return hashlib.new(name, data).digest()


def _encode(raw: bytes, encoding: str) -> str:
    if encoding == "hex":
        return raw.hex()
    if encoding == "base64":
        return base64.b64encode(raw).decode()
    return base64.urlsafe_b64encode(raw).decode()


@dataclass(frozen=True, slots=True)
class Derivation:
    """One construction: a digest over a text of the arguments, encoded, cut to `length` characters."""

    digest: str
    text: str
    encoding: str
    length: int

    def make(self, tool: str, arguments: Mapping[str, Any]) -> str:
        raw = _digest(self.digest, TEXTS[self.text](tool, arguments).encode())
        return _encode(raw, self.encoding)[: self.length]

    @property
    def name(self) -> str:
        """What it is, in words: `sha256 over compact sorted JSON, hex, first 16 chars`."""
        digest = (
            f"HMAC-{self.digest[5:]} with an empty key" if self.digest.startswith("hmac-") else self.digest
        )
        encoding = {"hex": "hex", "base64": "base64", "base64url": "URL-safe base64"}[self.encoding]
        whole = _encode(_digest(self.digest, b""), self.encoding)
        full, unpadded = len(whole), len(whole.rstrip("="))
        if self.length >= full:
            cut = "whole"
        elif self.length == unpadded:
            cut = "whole, without padding"
        else:
            cut = f"first {self.length} chars"
        return f"{digest} over {self.text}, {encoding}, {cut}"


def candidates(length: int) -> tuple[Derivation, ...]:
    """Every construction tried for a token of `length` characters, in the order they are tried."""
    return tuple(
        Derivation(digest, text, encoding, length)
        for digest in DIGESTS
        for text in TEXTS
        for encoding in ENCODINGS
    )


def matching(tool: str, arguments: Mapping[str, Any], token: str) -> tuple[Derivation, ...]:
    """Every construction that makes `token` from `tool` and `arguments`, in the order tried.

    More than one can agree on one call (sorted and unsorted JSON of one argument, a base64 cut
    with no '+' or '/' in it) and still differ on another; a forger tries each distinct one.
    """
    if not token:
        return ()
    return tuple(d for d in candidates(len(token)) if d.make(tool, arguments) == token)


def search(tool: str, arguments: Mapping[str, Any], token: str) -> Derivation | None:
    """The first construction that makes `token` from `tool` and `arguments`; None if none does."""
    found = matching(tool, arguments, token)
    return found[0] if found else None


# Where a value the server derives itself goes among the arguments: after them (argument order), and
# first once sorted by name (no argument name sorts before it).
_DERIVED_KEY = "\x00"


@dataclass(frozen=True, slots=True)
class View:
    """The arguments as a server may see them before it makes the token: as sent, or filled in first."""

    # The schema's defaults filled in for the optional fields the caller left out.
    defaults: bool = False
    # A value the server derives from the subject itself, by what it is (`the file's sha256`).
    derived: str | None = None

    def of(
        self,
        arguments: Mapping[str, Any],
        schema: Mapping[str, Any],
        leave_out: tuple[str, ...] = (),
        derived: Mapping[str, str] | None = None,
    ) -> dict[str, Any] | None:
        """This view of `arguments`; None if it needs a derived value the subject does not give."""
        seen = dict(arguments)
        if self.defaults:
            for name, prop in (schema.get("properties") or {}).items():
                if (
                    name not in seen
                    and name not in leave_out
                    and isinstance(prop, Mapping)
                    and "default" in prop
                ):
                    seen[name] = prop["default"]
        if self.derived is not None:
            value = (derived or {}).get(self.derived)
            if value is None:
                return None
            seen[_DERIVED_KEY + self.derived] = value
        return seen

    @property
    def name(self) -> str:
        parts = ["its arguments"]
        if self.defaults:
            parts.append("with the schema's defaults filled in")
        if self.derived is not None:
            parts.append(f"and {self.derived}")
        return " ".join(parts)


def views(derived: Mapping[str, str] | None = None) -> tuple[View, ...]:
    """Every view tried, as sent first; with each derived value the subject gives."""
    found: list[View] = [View(), View(defaults=True)]
    for what in derived or {}:
        found.extend([View(derived=what), View(defaults=True, derived=what)])
    return tuple(found)


def matching_views(
    tool: str,
    arguments: Mapping[str, Any],
    token: str,
    schema: Mapping[str, Any],
    leave_out: tuple[str, ...] = (),
    derived: Mapping[str, str] | None = None,
) -> tuple[tuple[View, Derivation], ...]:
    """Every (view, construction) that makes `token`, in the order tried; a view equal to one before is skipped."""
    found: list[tuple[View, Derivation]] = []
    tried: list[dict[str, Any]] = []
    for view in views(derived):
        seen = view.of(arguments, schema, leave_out, derived)
        if seen is None or seen in tried:
            continue
        tried.append(seen)
        found.extend((view, d) for d in matching(tool, seen, token))
    return tuple(found)
