"""A question's text as a person reads it, where it escapes what it shows.

A careful server may show a name with markdown backslash escapes (`hl1\\-8\\_.txt`),
visible code-point escapes (`\\u200b`, `<U+200B>`) or inside a code span; what is
looked for in a question (the end of a name, the file's name, a link) is looked for
in what a person sees, not in the escaping.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

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


# What a terminal program adds around text without changing what a person reads there: its colours
# (SGR, ESC [ ... m), and the line breaks it wraps a long line with.
_COLOURS = re.compile(r"\x1b\[[0-9;:]*m")
_LINE_ENDS = re.compile(r"\r\n|[\r\n]")


def as_read(message: str, *, wrap: str = "") -> str:
    """The question as a person reads it: every escape it uses undone.

    What is looked for in it (the end of the name, the file's name) is plain text,
    so undoing an escape can only find what the question really shows, escaped. A
    code span is read the same way: markdown leaves a backslash there as it is, but a
    server that quotes in code spans and shows escapes there escapes its own
    backslashes too, or its escapes would not be told apart from a name's text.
    Colour codes and line breaks go first: text a terminal program colours in pieces or
    wraps over two lines is still in front of the person, and an escape shown as text
    (`\\x1b[0m`) is read after them, so it is never taken for one. `wrap` is what a line
    break is read as: nothing (a line wrapped inside a word), or the space a wrap took.
    """
    # Each pass only where the text holds what it undoes (found in C, far cheaper than a pass):
    # most questions hold no colour and no line break.
    text = _COLOURS.sub("", message) if "\x1b" in message else message
    if "\n" in text or "\r" in text:
        text = _LINE_ENDS.sub(wrap, text)
    if "\\" in text or "<U+" in text:
        text = _READ_ESCAPE.sub(_read_escape, text)
    return text


_PUNCTUATION_ESCAPE = re.compile(r"\\[!-/:-@\[-`{-~]")


def unquoted(text: str) -> str:
    """`text` with its backslashed ASCII punctuation (`\\"`, `\\_`, `\\\\`) as the punctuation itself.

    How a careful server quotes the characters around what it shows raw or escaped: the
    name's own text is found next to a character whatever quoting its neighbours got.
    """
    return _PUNCTUATION_ESCAPE.sub(lambda match: match.group()[1], text) if "\\" in text else text


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
    if "\\" not in message and "`" not in message:
        return message  # no escape and no code span: nothing is literal
    escapes = [match.span() for match in _PUNCTUATION_ESCAPE.finditer(message)]
    literal = sorted([*escapes, *_code_spans(message)]) if "`" in message else escapes
    # The text between the literal parts as it is, each part (or run of overlapping ones) inert:
    # sliced, not copied into a list a character at a time.
    pieces: list[str] = []
    done = 0
    for start, end in literal:
        if end <= done:
            continue
        if start > done:
            pieces.append(message[done:start])
            done = start
        pieces.append(_INERT * (end - done))
        done = end
    pieces.append(message[done:])
    return "".join(pieces)


def result_as_shown(text: str) -> str:
    """A tool result's text (a preview's) as a human is shown it, ready for the question checks.

    A JSON document is data: a client shows it as code, so markup in its strings is
    inert, and its escapes (`\\u0007`, `\\n`) are escapes, undone by `as_read` where a
    name is looked for. What acts in any rendering (a raw control, bidi or line break
    inside it) is still there. Any other text is read as it is, like a question.
    """
    try:
        document = json.loads(text)
    except ValueError:
        return text
    if not isinstance(document, dict | list):
        return text
    fence = "`" * (max(map(len, _BACKTICKS.findall(text)), default=0) + 1)
    return f"{fence}{text}{fence}"


def terminal_as_shown(text: str) -> str:
    """What a terminal showed a person, ready for the question checks.

    A terminal renders no markup, so links and emphasis in it are inert (read as code);
    what acts there, a raw control, an escape sequence, a line break, is still in the text.
    """
    fence = "`" * (max(map(len, _BACKTICKS.findall(text)), default=0) + 1)
    return f"{fence}{text}{fence}"


HANDLE = "{handle}"


def without_handle(text: str, handle: str | None, sent: Iterable[str] = ()) -> str:
    """`text` with the handle a server minted for this call left out (as `{handle}`), what the harness sent kept.

    A token or pending id differs from call to call, so it is left out of what the person read
    before it is compared with the question about a plain name. But a handle is not always
    minted: a server may stage an action under its subject (host-terminal-mcp's pending id is
    the command line `rm notes/report.txt` itself) or build its id around it
    (`delete:report.txt:7f3a`). What the harness sent holds the very name the checks look for,
    so leaving it out with the handle wiped the name from a question that shows it whole, and a
    careful question was reported as one that masks, shortens or never names it. Hence:

    - an occurrence of the handle that lies within an occurrence of a value sent is that value's
      text, left as it is: the handle that IS the value (`id_from:` a field that echoes it);
    - so is one inside a longer word: a short handle ("7") that happens to stand inside a name
      (`ck7o.txt`) is the name's text, whoever shows it;
    - elsewhere the handle is left out, but each value sent that it holds whole, between
      separators, stays where it stands: `delete:report.txt:7f3a` reads
      `{handle}report.txt{handle}`.

    Not "leave out only a handle the harness did not send": one built around the subject would
    then stay whole, its minted part differing in every question. The separators keep a short
    value sent ("a") from being found by chance inside a random handle (`9fa3c`).
    """
    if not handle or handle not in text:
        return text
    values = sorted({value for value in sent if value}, key=len, reverse=True)
    theirs = [span for value in values for span in _spans(text, value)]
    shown = _minted_part(handle, values)
    pieces: list[str] = []
    done = 0
    for start, end in _spans(text, handle):
        if start < done or not _apart(text, start, end):
            continue  # overlapping an occurrence already taken, or part of a longer word
        if any(low <= start and end <= high for low, high in theirs):
            continue  # the harness's own text
        pieces += [text[done:start], shown]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def _spans(text: str, part: str) -> list[tuple[int, int]]:
    """Every occurrence of `part` in `text`, overlapping ones too: (start, end)."""
    found: list[tuple[int, int]] = []
    start = text.find(part)
    while start >= 0:
        found.append((start, start + len(part)))
        start = text.find(part, start + 1)
    return found


def _minted_part(handle: str, values: Sequence[str]) -> str:
    """`handle` as the server minted it: each value sent that it holds between separators kept, the rest `{handle}`."""
    kept: list[tuple[int, int]] = []
    for value in values:  # the longest first: a value inside a longer one is that one's
        for start, end in _spans(handle, value):
            if _apart(handle, start, end) and not any(start < high and low < end for low, high in kept):
                kept.append((start, end))
    pieces: list[str] = []
    done = 0
    for start, end in sorted(kept):
        pieces += [HANDLE] if start > done else []
        pieces.append(handle[start:end])
        done = end
    pieces += [HANDLE] if done < len(handle) else []
    return "".join(pieces)


def _apart(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` begins and ends at a word's edge: not part of a longer word."""
    begins = start == 0 or not (text[start - 1].isalnum() and text[start].isalnum())
    return begins and (end == len(text) or not (text[end - 1].isalnum() and text[end].isalnum()))
