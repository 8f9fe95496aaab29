"""Checks on what the human is shown: the question's text and its form.

Pure functions of recorded text, so each is tested table-driven. A character
"came from the name" when the question about a hostile name holds more of it
than the question about a plain name (the baseline): the template's own line
breaks are not the name's doing. Every finding quotes the name escaped, never
raw, so evidence cannot be rearranged by what it reports.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

from ..models import Verdict
from .characters import ESCAPES, LINE_BREAKS, char_class, dangerous_pattern, invisible_edges
from .question_text import as_read, markup_view, unquoted

Finding = tuple[Verdict, str]

_BREAK = re.compile(f"[{LINE_BREAKS}]")


def escaped(text: str) -> str:
    """The exact code points, quoted, in printable ASCII: what evidence shows instead of a raw name.

    One escape per code point (\\U0001xxxx beyond the BMP, never a surrogate pair), so
    the name can be recreated exactly from the evidence.
    """
    # Every exchange of every attack is written this way, so printable ASCII is copied as it is
    # and the rest is escaped in one pass in C: Python's own `unicode_escape` codec writes `\t`,
    # `\n`, `\r` and the backslash by name, every other code point outside printable ASCII as
    # \xNN (to U+00FF), \uNNNN (to U+FFFF) or \UNNNNNNNN, lone surrogates too; only the quote
    # is left, and a quote in its output is one of the text's. (`str.translate` with a table of
    # escapes looked every character up in a dict, raising a KeyError for each one it left alone.)
    if _PRINTABLE.fullmatch(text):
        return f'"{text}"'  # nothing to escape, the common case
    return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


# Printable ASCII but the quote and the backslash: what needs no escape.
_PRINTABLE = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]*")


def smuggled(
    message: str, baseline: str, name: str | None = None, *, breaks_are_content: bool = False
) -> list[Finding]:
    """Line breaks, bidi, invisible, escape and other control characters the name brought in.

    `breaks_are_content`: the name stands in a value shown last below a separator (`fenced_last`),
    where its line breaks are the value's own lines, never a line of the question's; what hides text
    (bidi, invisible, escapes, controls) hides it there as anywhere, and is still counted.

    With the `name`, two kinds a renderer makes of its own are told apart from the name's: a
    program that colours what it prints (a repr highlighter) emits more escape sequences for a
    name with more parts, its resets among them, and one that wraps long lines adds line breaks
    next to whatever text the wrap falls on. Either stands where the name has it only if the name
    reached the question raw, so that is what counts: see `_from_the_name`.
    """
    if message.isascii() and message.isprintable():
        return []  # printable ASCII holds none of them (both told in C, faster than the search below)
    hits = dangerous_pattern().findall(message)
    if not hits:
        return []  # a careful question (the name escaped) holds none: nothing is counted
    found = Counter(hits)
    known = _dangerous_in(baseline)
    extra = sorted(ch for ch, count in found.items() if count > known[ch])
    if breaks_are_content:
        extra = [ch for ch in extra if ch not in LINE_BREAKS]
    if name is not None:
        extra = [ch for ch in extra if _from_the_name(ch, message, baseline, name, found[ch] - known[ch])]
    return [
        (Verdict.VULNERABLE, f"{char_class(ch)} U+{ord(ch):04X} from the name reached the question")
        for ch in extra
    ]


# A terminal's escape sequences, whole: OSC (to BEL or ST), CSI (ESC [ or the one-byte CSI), and ESC
# with one character after it.
_SEQUENCE = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|\x1b.?", re.S)
_BREAKS = re.compile(f"[{LINE_BREAKS}]+")
_WRAP = f"[{LINE_BREAKS}]*"
# The name's text looked for on each side of what it put in the question: enough that a renderer's
# own break or colour code next to some text of the template or of the escaped name is not taken
# for the name's, few enough to fit between what a renderer does to the name around it.
_SIDE = 3


def _from_the_name(ch: str, message: str, baseline: str, name: str, excess: int) -> bool:
    """Whether `ch`, of which the question holds `excess` more than the plain one, is the name's doing."""
    if ch in LINE_BREAKS:
        return _break_in_place(ch, message, name, excess)
    if ch in ESCAPES:
        return _sequence_in_place(message, baseline, name) or any(
            _links_to_the_names_target(seq, name) for seq in _SEQUENCE.findall(message)
        )
    # A bidi, invisible or other control character the name does not hold is not the name's: a
    # question that shows other requests too (openmymemo's review of every change still waiting)
    # holds theirs, and more of them than the plain question did.
    return ch in name


def _break_in_place(ch: str, message: str, name: str, excess: int) -> bool:
    """Whether `ch` stands where one of the name's line breaks is, between the name's own text.

    The name's text must follow the break: one that ends the name begins no line of its own. Both
    sides must be the name's text (but at the name's start): a renderer's wrap falls next to
    whatever text it reaches, the template's or the escaped name's, but never between the name's
    text on both sides of its break, since an escaped break (`\\n`) is text there. Colour codes,
    another wrap inside that text, and the backslashes a server quotes the name's punctuation with
    are looked through. At the name's start a break stands where the template's own line end
    may: it is the name's only while the question holds no more breaks than the name brought. One
    that holds more shows more than this request (a person's review of everything waiting lists
    each request on lines of its own), so there only a break between the name's text counts.
    """
    view = unquoted(_SEQUENCE.sub("", message))
    own = len(_BREAK.findall(name))
    for run in _BREAKS.finditer(name):
        before, after = name[: run.start()][-_SIDE:], name[run.end() :][:_SIDE]
        if not after:
            # Nothing of the name follows it: a break that ends the name begins no line of the name's own.
            # mcp-proton-email's subject took only a trailing U+2029 (its mail library refuses any text
            # after one), and a search shrunk to that bare break was reported as a forged line.
            continue
        if not before and excess > own:
            continue  # at the name's start, among more line ends than it brought: nothing tells them apart
        if re.search(f"{_spread(before)}{_WRAP}{re.escape(ch)}{_WRAP}{_spread(after)}", view):
            return True
    return False


def _sequence_in_place(message: str, baseline: str, name: str) -> bool:
    """Whether one of the name's escape sequences is in the question raw, next to the name's text.

    A program that colours shows its own codes for the name's pieces, its resets too, so a code the
    name also holds is the name's only beside the name's text: on both sides of it, or on one (the
    name's text before it, or after it) when the plain question never had such a code. A wrap may
    fall inside (a program that wraps counts a raw escape as text of no width), and a renderer that
    drops the BEL ending a title leaves the title open: the sequence without it counts. The
    backslashes a server quotes the name's punctuation with are looked through (`ESC <` shown as
    `ESC \\<` is still the name's ESC, raw).
    """
    views = {message, unquoted(message)}
    for match in _SEQUENCE.finditer(name):
        sequence = match.group()
        before, after = name[max(0, match.start() - _SIDE) : match.start()], name[match.end() :][:_SIDE]
        sides = [(before, after)] if sequence in baseline else [(before, after), (before, ""), ("", after)]
        for shown in {sequence, sequence.removesuffix("\x07")}:
            for left, right in sides:
                if (left or right or not (before or after)) and any(
                    re.search(_spread(f"{left}{shown}{right}"), view) for view in views
                ):
                    return True
    return False


def _spread(text: str) -> str:
    """A pattern of `text` that a wrap may fall inside: a line break allowed between its characters."""
    return _WRAP.join(map(re.escape, text))


def _links_to_the_names_target(sequence: str, name: str) -> bool:
    """Whether a hyperlink sequence in the question opens a target the name holds (its markup, live)."""
    if not sequence.startswith("\x1b]"):
        return False
    target = sequence[2:].removesuffix("\x07").removesuffix("\x1b\\").rsplit(";", 1)[-1]
    return len(target) >= 3 and target in name


# One baseline serves every name an attack asks about: what it holds is worked out once.
@lru_cache(maxsize=64)
def _dangerous_in(baseline: str) -> Counter[str]:
    return Counter(dangerous_pattern().findall(baseline))


@lru_cache(maxsize=64)
def _template_lines(baseline: str) -> frozenset[str]:
    return frozenset(map(_trimmed, _BREAK.split(baseline)))


def _trimmed(text: str) -> str:
    """`text.strip(invisible_edges())`, returned as it is when neither end has anything to strip.

    `str.strip` builds a filter of all 4,000-odd characters it is given on every call, whatever
    the text; most lines of a question start and end with a visible character.
    """
    edges = _edge_set()
    if text and (text[0] in edges or text[-1] in edges):
        return text.strip(invisible_edges())
    return text


@cache
def _edge_set() -> frozenset[str]:
    return frozenset(invisible_edges())


def forged_line(message: str, baseline: str, name: str) -> list[Finding]:
    """Text after a line break in the name must not begin a line of the question."""
    segments = _BREAK.split(name)[1:]
    if not segments:
        return []  # no line break in the name: no line of the question can be its doing
    template = _template_lines(baseline)
    lines = [_trimmed(line) for line in _BREAK.split(message)]
    fresh = [line for line in lines if line and line not in template]
    findings: list[Finding] = []
    for segment in segments:
        start = _trimmed(segment)[:24]
        # A line the template itself starts that way ("Permanently delete...") is its own.
        if any(line.startswith(start) for line in template):
            continue
        if any(line.startswith(start) for line in fresh):
            findings.append(
                (Verdict.VULNERABLE, f"text after a line break in the name starts a line: {escaped(start)}")
            )
    return findings[:1]


_PLAIN_TAIL = re.compile(r"[A-Za-z0-9._-]{8,16}$")
# Where `_PLAIN_TAIL` can match: at most 16 characters before the end, or before a last line break.
_TAIL_REACH = 17


def end_visible(message: str, name: str) -> list[Finding]:
    """When a long name is shortened, its end (the file's own name) must still be shown."""
    # Searched only where it can match: tried at every position of a long name, it counts on each.
    tail = _PLAIN_TAIL.search(name[-_TAIL_REACH:])
    if tail is None or tail.group() in as_read(message):
        return []
    return [(Verdict.VULNERABLE, f"the end of the name, {escaped(tail.group())}, is not in the question")]


_LINKS = (
    ("a scheme URL", re.compile(r"(?i)\b[a-z][a-z0-9+.\-]{1,31}://[^\s\"'<>]+")),
    ("a markdown link", re.compile(r"\[[^\]\n]*\]\([^)\s]*\)")),
    ("an autolink", re.compile(r"<[a-zA-Z][a-zA-Z0-9+.\-]{1,31}:[^\s<>]*>")),
    ("an HTML link", re.compile(r"(?i)<\s*(?:a|img|area|form|iframe)\b[^<>]*")),
)
# Text every match of each kind holds: a question without it has no such link, and the
# pattern (the scheme URL's, tried at every word) is not run over it.
_LINK_MARKS = ("://", "](", "<", "<")


def _links(message: str) -> tuple[list[tuple[int, str]], ...]:
    """Each kind's links in the question: where each starts, and its text."""
    view = markup_view(message)
    # A list made, not a generator's four steps: every question asked is read here.
    return tuple(
        [
            [(m.start(), message[m.start() : m.end()]) for m in pattern.finditer(view)]
            if mark in view
            else []
            for (_, pattern), mark in zip(_LINKS, _LINK_MARKS, strict=True)
        ]
    )


# The numbers in a link's text: a template's link around an id (a fresh record's, each use of the action its own).
_NUMBERS = re.compile(r"\d+")


@lru_cache(maxsize=64)
def _template_links(baseline: str) -> tuple[tuple[frozenset[str], frozenset[int]], ...]:
    # One baseline serves every name an attack asks about: each kind's link texts (their numbers as 0) and starts.
    return tuple(
        (frozenset(_NUMBERS.sub("0", text) for _, text in found), frozenset(start for start, _ in found))
        for found in _links(baseline)
    )


def _shared_start(a: str, b: str) -> int:
    """How many characters two questions share from their start: the template's text before the name."""
    # Halving on slices compared in C: every name asked about is checked, character loops add up.
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def clickable(message: str, baseline: str) -> list[Finding]:
    """A link (in plain text, markdown or HTML) that the name put into the question.

    Text in a code span and backslash-escaped punctuation are literal in markdown:
    a bracket shown that way opens no link. A link the template opens itself, before
    the name (`s3://bucket/{name}`), is the template's even where the name lengthens it:
    the question about a plain name opens the same kind of link at the same place. A link the
    template shows after the name, around an id each use of the action gets afresh
    (`https://example.org/c41/1`, then `c49/1`), is the template's too: numbers aside, its text is.
    """
    findings: list[Finding] = []
    # How much the two questions share from their start: worked out only for a link the template also
    # opens there (most questions have no link at all).
    same: int | None = None
    for (kind, _), found, (texts, starts) in zip(
        _LINKS, _links(message), _template_links(baseline), strict=True
    ):
        for start, match in found:
            if _NUMBERS.sub("0", match) in texts:
                continue
            if start in starts:
                if same is None:
                    same = _shared_start(message, baseline)
                if start < same:
                    continue
            findings.append(
                (Verdict.WEAK, f"{kind} from the name is clickable in the question: {escaped(match)}")
            )
    return findings[:2]


def shown_whole(message: str, name: str) -> list[Finding]:
    """A printable ASCII name must be in the question as it is: nothing in it needs escaping or hiding."""
    if not (name.isascii() and name.isprintable()) or name in as_read(message):
        return []
    if " " in name and name in as_read(message, wrap=" "):
        return []  # a terminal program wrapped the line at one of its spaces, and took the space
    return [
        (
            Verdict.VULNERABLE,
            f"the name, {escaped(name)}, is not shown (masked or left out): the person approves a file "
            "they cannot see",
        )
    ]


# A line that fences off what follows from the question's own text: a thematic break (`---`, `***`,
# `___`), a setext underline (`===`), or a code fence opened (```, ~~~, an info string after it).
_SEPARATOR = re.compile(r"[ \t]*(?:-{3,}|\*{3,}|_{3,}|={3,}|`{3,}[^`]*|~{3,}.*)[ \t]*")
# How a server says it cut a value short, at its end.
_CUT_MARK = re.compile(r"(?:\u2026|\.\.\.)$")


def fenced_last(message: str, baseline: str, name: str) -> bool:
    """Whether `name` stands in a value shown last, from a line of its own below a separator line.

    An email's body under `---` (mcp-proton-email's send_email): everything after the separator is
    the mail, and nothing of the server's follows it, so a line the value starts (a "SYSTEM NOTICE")
    is read as the mail's, and cannot pass for one of the question's, which are all above it.
    `baseline` is the question with the plain value cut out (prompt-forging's argument probes): it
    ends with the separator line exactly when the value stood last below it. The question must then
    be that text, a line break, and the value, its last line the name's last line or the head of a
    line of the name's cut short (`_ends_with`): a line of the server's after the value (a closing
    `---`, "Reply yes to send"), or no separator, and the value's lines are judged as anywhere else.
    Where the value stands decides it, never the argument's name.
    """
    if not _BREAK.search(name):
        return False  # no line of the name's own to excuse
    head = baseline.rstrip()
    if not head or not message.startswith(head):
        return False
    if not _SEPARATOR.fullmatch(_BREAK.split(head)[-1]):
        return False
    # The separator line's own trailing blanks, then its line end: the value starts a line of its own.
    tail = message[len(head) :].lstrip(" \t")
    return bool(tail) and tail[0] in LINE_BREAKS and _ends_with(tail, name)


def _ends_with(tail: str, name: str) -> bool:
    """Whether the question's last line is the name's last line, or the head of a line of the name's cut short.

    Read as a person reads it (`as_read`: its escapes undone), so a value shown with its other
    characters escaped (a CR as `\\r`, a bracket as `\\u005b`) still ends where the name does. A
    line of the name's after its first break is a line of its own in the question: a cut (an
    ellipsis after it or not) leaves the head of one. A name of line breaks only has no text to
    find: they end the value, so the value above them must be one line, no line of the server's after.
    """
    lines = _BREAK.split(name.rstrip())
    shown = _CUT_MARK.sub("", as_read(_BREAK.split(tail.rstrip())[-1]).rstrip()).rstrip()
    if not lines[-1]:
        # A name of line breaks only, last in the value: they end it, so its text above them is one line.
        return not _BREAK.search(tail.strip())
    if not shown:
        return False
    return shown.endswith(lines[-1]) or any(line.startswith(shown) for line in lines[1:])


def message_problems(message: str, baseline: str, name: str) -> list[Finding]:
    """Every check on one question about one hostile name."""
    # Below a separator, with nothing of the server's after it, the name's lines are the value's.
    content = fenced_last(message, baseline, name)
    return [
        *smuggled(message, baseline, name, breaks_are_content=content),
        *([] if content else forged_line(message, baseline, name)),
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
