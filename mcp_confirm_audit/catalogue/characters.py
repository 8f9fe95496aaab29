"""Which characters a question must not show raw, from Unicode's own data.

Line breaks, bidi controls (Bidi_Control), terminal escapes, what renders as
nothing (Default_Ignorable_Code_Point: zero-width and tag characters, and the
letters and marks a category check lets through, Hangul fillers and variation
selectors), and every other control (Cc) or format (Cf) character. The standard
library's `unicodedata` has the categories but neither property: those come from
the `regex` package's tables (a test checks they are not newer than this Python's
Unicode, and the whole class at every code point).
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

import regex

# What str.splitlines() breaks on (a test checks every code point).
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
TAGS = range(0xE0000, 0xE0080)
ESCAPES = "\x1b\x9b"  # ESC and the one-byte CSI: where terminal escape sequences start


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
def dangerous_pattern() -> re.Pattern[str]:
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


@cache
def invisible_edges() -> str:
    # What may sit unseen at either end of a line: a forged line still starts there.
    return " \t" + "".join(sorted(bidi_controls() | default_ignorable()))
