"""Checks on what the human is shown: the question's text and its form.

Pure functions of recorded text, so each is tested table-driven. A character
"came from the name" when the question about a hostile name holds more of it
than the question about a plain name (the baseline): the template's own line
breaks are not the name's doing. Every finding quotes the name escaped, never
raw, so evidence cannot be rearranged by what it reports.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

from .models import Verdict

Finding = tuple[Verdict, str]

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
BIDI = "\u061c\u200e\u200f" + "".join(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
TAGS = range(0xE0000, 0xE0080)
ESCAPES = "\x1b\x9b"  # ESC and the one-byte CSI: where terminal escape sequences start
_BREAK = re.compile(f"[{LINE_BREAKS}]")


_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}


def escaped(text: str) -> str:
    """The exact code points, quoted, in printable ASCII: what evidence shows instead of a raw name.

    One escape per code point (\\U0001xxxx beyond the BMP, never a surrogate pair), so
    the name can be recreated exactly from the evidence.
    """
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[ch])
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code <= 0xFF:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def char_class(ch: str) -> str | None:
    """Which kind of dangerous character `ch` is, or None for an ordinary one."""
    if ch in LINE_BREAKS:
        return "line break"
    if ch in BIDI:
        return "bidi control"
    if ch in ZERO_WIDTH or ord(ch) in TAGS:
        return "invisible character"
    if ch in ESCAPES:
        return "escape character"
    if unicodedata.category(ch) in ("Cc", "Cf"):
        return "control character"
    return None


# Unicode puts control (Cc) and format (Cf) characters in planes 0, 1 and 14
# only (a test checks the whole range), so only those are searched for them.
CONTROL_PLANES = (range(0x20000), range(0xE0000, 0xE1000))


@cache
def control_characters() -> frozenset[str]:
    """Every control (Cc) and format (Cf) character."""
    return frozenset(
        ch for plane in CONTROL_PLANES for ch in map(chr, plane) if unicodedata.category(ch) in ("Cc", "Cf")
    )


@cache
def _dangerous() -> re.Pattern[str]:
    """Any character `char_class` names: one regular expression, not a lookup per character."""
    chars = {*LINE_BREAKS, *BIDI, *ZERO_WIDTH, *ESCAPES, *map(chr, TAGS), *control_characters()}
    # As ranges: a class of single characters beyond the BMP is searched item by item.
    ranges: list[list[int]] = []
    for code in sorted(map(ord, chars)):
        if ranges and ranges[-1][1] + 1 == code:
            ranges[-1][1] = code
        else:
            ranges.append([code, code])
    parts = (re.escape(chr(a)) + ("" if a == b else "-" + re.escape(chr(b))) for a, b in ranges)
    return re.compile("[" + "".join(parts) + "]")


def smuggled(message: str, baseline: str) -> list[Finding]:
    """Line breaks, bidi, invisible, escape and other control characters the name brought in."""
    dangerous = _dangerous()
    found = Counter(dangerous.findall(message))
    known = Counter(dangerous.findall(baseline))
    extra = sorted(ch for ch, count in found.items() if count > known[ch])
    return [
        (Verdict.VULNERABLE, f"{char_class(ch)} U+{ord(ch):04X} from the name reached the question")
        for ch in extra
    ]


def forged_line(message: str, baseline: str, name: str) -> list[Finding]:
    """Text after a line break in the name must not begin a line of the question."""
    strip = " \t" + BIDI + ZERO_WIDTH
    template = {line.strip(strip) for line in _BREAK.split(baseline)}
    lines = [line.strip(strip) for line in _BREAK.split(message)]
    fresh = [line for line in lines if line and line not in template]
    findings: list[Finding] = []
    for segment in _BREAK.split(name)[1:]:
        start = segment.strip(strip)[:24]
        if start and any(line.startswith(start) for line in fresh):
            findings.append(
                (Verdict.VULNERABLE, f"text after a line break in the name starts a line: {escaped(start)}")
            )
    return findings[:1]


_PLAIN_TAIL = re.compile(r"[A-Za-z0-9._-]{8,16}$")


def end_visible(message: str, name: str) -> list[Finding]:
    """When a long name is shortened, its end (the file's own name) must still be shown."""
    tail = _PLAIN_TAIL.search(name)
    if tail is None or tail.group() in message:
        return []
    return [(Verdict.VULNERABLE, f"the end of the name, {escaped(tail.group())}, is not in the question")]


_LINKS = (
    ("a scheme URL", re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,31}://[^\s\"'<>]+")),
    ("a markdown link", re.compile(r"(?<!\\)\[[^\]\n]*(?<!\\)\]\([^)\s]*\)")),
    ("an autolink", re.compile(r"(?<!\\)<[a-zA-Z][a-zA-Z0-9+.\-]{1,31}:[^\s<>]*(?<!\\)>")),
    ("an HTML link", re.compile(r"(?i)(?<!\\)<\s*(?:a|img|area|form|iframe)\b[^<>]*")),
)


@lru_cache(maxsize=64)
def _template_links(baseline: str) -> tuple[frozenset[str], ...]:
    # One baseline serves every name an attack asks about.
    return tuple(frozenset(pattern.findall(baseline)) for _, pattern in _LINKS)


def clickable(message: str, baseline: str) -> list[Finding]:
    """A link (in plain text, markdown or HTML) that the name put into the question."""
    findings: list[Finding] = []
    for (kind, pattern), template in zip(_LINKS, _template_links(baseline), strict=True):
        for match in pattern.findall(message):
            if match not in template:
                findings.append(
                    (Verdict.WEAK, f"{kind} from the name is clickable in the question: {escaped(match)}")
                )
    return findings[:2]


def message_problems(message: str, baseline: str, name: str) -> list[Finding]:
    """Every check on one question about one hostile name."""
    return [
        *smuggled(message, baseline),
        *forged_line(message, baseline, name),
        *end_visible(message, name),
        *clickable(message, baseline),
    ]


def collisions(rendered: Sequence[tuple[str, str]]) -> list[Finding]:
    """Two different names whose questions read exactly the same."""
    seen: dict[str, str] = {}
    for name, message in rendered:
        other = seen.setdefault(message, name)
        if other != name:
            return [
                (Verdict.WEAK, f"two names render the same question: {escaped(other)} and {escaped(name)}")
            ]
    return []


# Letter boundaries rather than \b, so "api_key" and "accessToken" match but "discard" does not.
_SECRETS = re.compile(
    r"(?<![a-z])(?:pass(?:word|phrase|code)|secret|token|credentials?|api[\s_-]?key|private[\s_-]?key"
    r"|one[\s_-]?time|otp|totp|2fa|mfa|cvv|cvc|iban|credit[\s_-]?card|card[\s_-]?(?:number|no))(?![a-z])",
)
_PRIMITIVES = ("string", "number", "integer", "boolean")


def _words(key: str, field: Mapping[str, Any]) -> str:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", key)  # accessToken -> access Token
    return " ".join(str(x) for x in (spaced, field.get("title", ""), field.get("description", ""))).lower()


def _primitive(field: Mapping[str, Any]) -> bool:
    kind = field.get("type")
    if kind in _PRIMITIVES:
        return "properties" not in field and "items" not in field
    if kind == "array":  # a multi-select: an array of enumerated strings
        items = field.get("items")
        return (
            isinstance(items, Mapping)
            and items.get("type") == "string"
            and ("enum" in items or "anyOf" in items)
        )
    return False


def form_secrets(schema: Mapping[str, Any] | None) -> list[Finding]:
    """A form field asking for a password, token, key, credential, card number or one-time code."""
    findings: list[Finding] = []
    for key, field in _properties(schema):
        hit = _SECRETS.search(_words(key, field))
        if hit:
            findings.append(
                (Verdict.VULNERABLE, f"the form asks for a secret: field {escaped(key)} ({hit.group()})")
            )
    return findings


def form_nesting(schema: Mapping[str, Any] | None) -> list[Finding]:
    """A form field that is not a primitive: forms are flat objects of primitive fields."""
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return [(Verdict.WEAK, "the form's schema is not a flat object")]
    return [
        (Verdict.WEAK, f"form field {escaped(key)} is not a primitive ({escaped(str(field.get('type')))})")
        for key, field in _properties(schema)
        if not _primitive(field)
    ]


def names_target(message: str, relative_path: str) -> list[Finding]:
    """The question must say which file the tool will act on."""
    name = relative_path.rsplit("/", 1)[-1]
    if name in message:
        return []
    return [(Verdict.VULNERABLE, f"the question does not name the file it is about ({escaped(name)})")]


def _properties(schema: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    props = (schema or {}).get("properties") or {}
    if not isinstance(props, Mapping):
        return []
    return [(str(k), v if isinstance(v, Mapping) else {}) for k, v in props.items()]
