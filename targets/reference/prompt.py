"""The question a human reads: an untrusted file name made safe to show.

Every character that is invisible, reorders text, moves the cursor or breaks the line is
replaced by a visible stand-in, and the characters a style quotes with are escaped too,
so the mapping is injective: two different names never render the same, and the name
cannot leave its quotes. How a style writes those escapes is its own (`Escaping`; see
`styles/`); which characters hide is decided here, once, from Unicode's data. Long names
lose their middle, because the end (the file name) is what matters.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import regex

Sanitiser = Literal["careful", "keeps-bidi", "folds-controls", "category-only", "none"]
Truncate = Literal["middle", "end"]

MAX_SHOWN = 160

_LINE_BREAKS = {"\n": "\\n", "\r": "\\r", "\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_BIDI = {*"\u061c\u200e\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}
_ZERO_WIDTH = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
# Cc: controls (ANSI ESC), Cf: format (bidi, zero-width, tags), Zl/Zp: separators,
# Cs/Co/Cn: surrogates, private use, unassigned; Zs: spaces that look like " ".
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn", "Zs"}
# Letters and marks that render as nothing (Hangul fillers, variation selectors, the
# combining grapheme joiner): no category names them, Unicode's property does.
_RENDERS_AS_NOTHING = regex.compile(r"\p{Default_Ignorable_Code_Point}")


def hides(ch: str, *, category_only: bool = False) -> bool:
    """Whether `ch` must be shown as an escape: it is invisible, reorders or breaks the text."""
    if ch in _LINE_BREAKS or (ch != " " and unicodedata.category(ch) in _ESCAPED_CATEGORIES):
        return True
    # FLAW sanitiser-category-only: a Hangul filler is a letter, a variation selector a mark.
    return not category_only and _RENDERS_AS_NOTHING.match(ch) is not None


def backslash_u(ch: str) -> str:
    """`\\n`, `\\u200b`, `\\U000e0041`: the stand-in the default style shows."""
    code = ord(ch)
    return _LINE_BREAKS.get(ch) or (f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")


@dataclass(frozen=True, slots=True)
class Escaping:
    """How one style writes a name: the characters it quotes, and how a hidden one shows."""

    quote: Callable[[str], str | None]  # a character's escaped form, or None to leave it
    visible: Callable[[str], str]  # the visible stand-in for a character that hides


DOUBLE_QUOTED = Escaping(
    quote=lambda ch: "\\" + ch if ch in ('"', "\\", "[", "]", "<", ">") else None,
    visible=backslash_u,
)


def _tokens(name: str, sanitiser: Sanitiser, escaping: Escaping) -> list[str]:
    out: list[str] = []
    for ch in name:
        if sanitiser == "none":
            out.append(ch)  # FLAW unsanitised-question
        elif (quoted := escaping.quote(ch)) is not None:
            out.append(quoted)
        elif sanitiser == "keeps-bidi" and (ch in _BIDI or ch in _ZERO_WIDTH):
            out.append(ch)  # FLAW sanitiser-keeps-bidi
        elif hides(ch, category_only=sanitiser == "category-only"):
            # FLAW sanitiser-folds-controls: a space, so "a\nb" and "a b" read the same.
            out.append(" " if sanitiser == "folds-controls" else escaping.visible(ch))
        else:
            out.append(ch)
    return out


def shown_name(
    name: str,
    *,
    sanitiser: Sanitiser = "careful",
    truncate: Truncate = "middle",
    limit: int = MAX_SHOWN,
    escaping: Escaping = DOUBLE_QUOTED,
) -> str:
    """`name` escaped and bounded, ready to sit between the style's quotes."""
    tokens = _tokens(name, sanitiser, escaping)
    if sanitiser == "none" or sum(map(len, tokens)) <= limit:
        return "".join(tokens)
    if truncate == "end":
        # FLAW sanitiser-truncates-end: the tail, where the real name is, is lost.
        return _take(tokens, limit - 1) + "…"
    head = _take(tokens, limit // 4)
    tail = _take(tokens[::-1], limit - len(head) - 1, reverse=True)
    return head + "…" + tail


def _take(tokens: list[str], budget: int, *, reverse: bool = False) -> str:
    """Whole tokens up to `budget` characters: an escape is never cut in half."""
    kept: list[str] = []
    used = 0
    for token in tokens:
        if used + len(token) > budget:
            break
        kept.append(token)
        used += len(token)
    return "".join(kept[::-1] if reverse else kept)


def how_to_answer(form: str, verb: str) -> str:
    return {
        "boolean": f"Tick the box to {verb} it.",
        "name": "Type the file's name to confirm.",
        "enum": f'Choose "delete" to {verb} it or "keep" to keep it.',
    }[form]


def question(
    shown: str, form: str, effect: Literal["delete", "truncate"] = "delete", *, named: bool = True
) -> str:
    verb = {"delete": "delete", "truncate": "empty"}[effect]
    how = how_to_answer(form, verb)
    if not named:
        # FLAW question-without-name: the user is asked to confirm without being told what.
        return f"Permanently {verb} the file? This cannot be undone. {how}"
    if effect == "truncate":
        return (
            f'Empty the file "{shown}" in the server\'s folder (truncate it to zero bytes)? '
            f"Its contents cannot be recovered. {how}"
        )
    return f'Permanently delete the file "{shown}" from the server\'s folder? This cannot be undone. {how}'
