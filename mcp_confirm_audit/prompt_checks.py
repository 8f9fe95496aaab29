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

import regex  # Unicode properties `unicodedata` lacks: Default_Ignorable_Code_Point, Bidi_Control

from .models import Verdict

Finding = tuple[Verdict, str]

# What str.splitlines() breaks on (a test checks every code point).
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
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
    if ch in bidi_controls():
        return "bidi control"
    if ch in ESCAPES:
        return "escape character"
    if ch in default_ignorable():
        return "invisible character"
    if unicodedata.category(ch) in ("Cc", "Cf"):
        return "control character"
    return None


# Unicode puts control (Cc) and format (Cf) characters, and every default-ignorable
# code point, in planes 0, 1 and 14 only (a test checks the whole range), so only
# those are searched for them.
CONTROL_PLANES = (range(0x20000), range(0xE0000, 0xE1000))


@cache
def control_characters() -> frozenset[str]:
    """Every control (Cc) and format (Cf) character."""
    return frozenset(
        ch for plane in CONTROL_PLANES for ch in map(chr, plane) if unicodedata.category(ch) in ("Cc", "Cf")
    )


@cache
def _with_property(name: str) -> frozenset[str]:
    pattern = regex.compile(rf"\p{{{name}}}")
    return frozenset(ch for plane in CONTROL_PLANES for ch in pattern.findall("".join(map(chr, plane))))


@cache
def bidi_controls() -> frozenset[str]:
    """Unicode's Bidi_Control characters: the marks, embeddings, overrides and isolates."""
    return _with_property("Bidi_Control")


@cache
def default_ignorable() -> frozenset[str]:
    """What renders as nothing: Unicode's Default_Ignorable_Code_Point, bidi controls aside.

    Zero-width characters and the tag block, and also letters and marks a category
    check lets through: Hangul fillers, variation selectors, the combining grapheme
    joiner, Mongolian free variation selectors.
    """
    return _with_property("Default_Ignorable_Code_Point") - bidi_controls()


@cache
def _dangerous() -> re.Pattern[str]:
    """Any character `char_class` names: one regular expression, not a lookup per character."""
    chars = {*LINE_BREAKS, *ESCAPES, *bidi_controls(), *default_ignorable(), *control_characters()}
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
    strip = _invisible_edges()
    template = {line.strip(strip) for line in _BREAK.split(baseline)}
    lines = [line.strip(strip) for line in _BREAK.split(message)]
    fresh = [line for line in lines if line and line not in template]
    findings: list[Finding] = []
    for segment in _BREAK.split(name)[1:]:
        start = segment.strip(strip)[:24]
        # A line the template itself starts that way ("Permanently delete...") is its own.
        if any(line.startswith(start) for line in template):
            continue
        if any(line.startswith(start) for line in fresh):
            findings.append(
                (Verdict.VULNERABLE, f"text after a line break in the name starts a line: {escaped(start)}")
            )
    return findings[:1]


@cache
def _invisible_edges() -> str:
    # What may sit unseen at either end of a line: a forged line still starts there.
    return " \t" + "".join(sorted(bidi_controls() | default_ignorable()))


# The escapes a question may use to show a name: a markdown backslash before ASCII
# punctuation (CommonMark), and a code point written visibly (\u200b, \U000e0041,
# \x1b, \u{200B}, <U+200B>). One pass, left to right, so an escaped backslash
# ("\\u200b") is a backslash followed by text, never an escape itself.
_READ_ESCAPE = re.compile(
    r"\\([!-/:-@\[-`{-~])|\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\x([0-9a-fA-F]{2})"
    r"|\\u\{([0-9a-fA-F]{1,6})\}|<U\+([0-9a-fA-F]{4,6})>"
)


def _read_escape(match: re.Match[str]) -> str:
    punctuation, *codes = match.groups()
    if punctuation is not None:
        return punctuation
    code = int(next(c for c in codes if c is not None), 16)
    return chr(code) if code <= 0x10FFFF else match.group()


def as_read(message: str) -> str:
    """The question as a person reads it: every escape it uses undone.

    What is looked for in it (the end of the name, the file's name) is plain text,
    so undoing an escape can only find what the question really shows, escaped.
    """
    return _READ_ESCAPE.sub(_read_escape, message)


_PLAIN_TAIL = re.compile(r"[A-Za-z0-9._-]{8,16}$")


def end_visible(message: str, name: str) -> list[Finding]:
    """When a long name is shortened, its end (the file's own name) must still be shown."""
    tail = _PLAIN_TAIL.search(name)
    if tail is None or tail.group() in as_read(message):
        return []
    return [(Verdict.VULNERABLE, f"the end of the name, {escaped(tail.group())}, is not in the question")]


_LINKS = (
    ("a scheme URL", re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,31}://[^\s\"'<>]+")),
    ("a markdown link", re.compile(r"\[[^\]\n]*\]\([^)\s]*\)")),
    ("an autolink", re.compile(r"<[a-zA-Z][a-zA-Z0-9+.\-]{1,31}:[^\s<>]*>")),
    ("an HTML link", re.compile(r"(?i)<\s*(?:a|img|area|form|iframe)\b[^<>]*")),
)
_PUNCTUATION_ESCAPE = re.compile(r"\\[!-/:-@\[-`{-~]")
_BACKTICKS = re.compile(r"`+")
_INERT = "\x00"  # stands in for literal text: matched by no link's syntax


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Where CommonMark sees code spans: a run of backticks to the next run of the same length."""
    runs = [m.span() for m in _BACKTICKS.finditer(text)]
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        start, end = runs[index]
        backslashes = len(text[:start]) - len(text[:start].rstrip("\\"))
        size = end - start - backslashes % 2  # a backslash-escaped backtick opens nothing
        closer = next((j for j in range(index + 1, len(runs)) if runs[j][1] - runs[j][0] == size), None)
        if size == 0 or closer is None:
            index += 1
            continue
        spans.append((end - size, runs[closer][1]))
        index = closer + 1
    return spans


def markup_view(message: str) -> str:
    """`message` with what markdown shows literally made inert: code spans, backslash escapes.

    The same length as `message`, so a link found in it is quoted from the message.
    """
    view = list(message)
    for match in _PUNCTUATION_ESCAPE.finditer(message):
        view[match.start() : match.end()] = _INERT * 2
    for start, end in _code_spans(message):
        view[start:end] = _INERT * (end - start)
    return "".join(view)


def _links(message: str) -> tuple[list[str], ...]:
    view = markup_view(message)
    return tuple([message[m.start() : m.end()] for m in pattern.finditer(view)] for _, pattern in _LINKS)


@lru_cache(maxsize=64)
def _template_links(baseline: str) -> tuple[frozenset[str], ...]:
    # One baseline serves every name an attack asks about.
    return tuple(frozenset(found) for found in _links(baseline))


def clickable(message: str, baseline: str) -> list[Finding]:
    """A link (in plain text, markdown or HTML) that the name put into the question.

    Text in a code span and backslash-escaped punctuation are literal in markdown:
    a bracket shown that way opens no link.
    """
    findings: list[Finding] = []
    for (kind, _), found, template in zip(_LINKS, _links(message), _template_links(baseline), strict=True):
        for match in found:
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
    if name in as_read(message):
        return []
    return [(Verdict.VULNERABLE, f"the question does not name the file it is about ({escaped(name)})")]


def _properties(schema: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    props = (schema or {}).get("properties") or {}
    if not isinstance(props, Mapping):
        return []
    return [(str(k), v if isinstance(v, Mapping) else {}) for k, v in props.items()]
