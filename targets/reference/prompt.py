"""The question a human reads: an untrusted file name made safe to show.

Every character that is invisible, reorders text, moves the cursor or breaks the line is
replaced by a visible escape, and the backslash and quote are escaped too, so the mapping
is injective: two different names never render the same, and the name cannot leave its
quotes. Brackets and angle brackets get a markdown backslash, so a name cannot become a
link in a client that renders markdown or HTML. Long names lose their middle, because
the end (the file name) is what matters.
"""

from __future__ import annotations

import unicodedata
from typing import Literal

Sanitiser = Literal["careful", "keeps-bidi", "folds-controls", "none"]

MAX_SHOWN = 160

_LINE_BREAKS = {"\n": "\\n", "\r": "\\r", "\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_BIDI = {*"\u061c\u200e\u200f", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))}
_ZERO_WIDTH = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
# Cc: controls (ANSI ESC), Cf: format (bidi, zero-width, tags), Zl/Zp: separators,
# Cs/Co/Cn: surrogates, private use, unassigned; Zs: spaces that look like " ".
_ESCAPED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn", "Zs"}


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _tokens(name: str, sanitiser: Sanitiser) -> list[str]:
    out: list[str] = []
    for ch in name:
        if sanitiser == "none":
            out.append(ch)  # FLAW unsanitised-question
        elif ch in ('"', "\\", "[", "]", "<", ">"):
            out.append("\\" + ch)
        elif sanitiser == "keeps-bidi" and (ch in _BIDI or ch in _ZERO_WIDTH):
            out.append(ch)  # FLAW sanitiser-keeps-bidi
        elif ch in _LINE_BREAKS or (ch != " " and unicodedata.category(ch) in _ESCAPED_CATEGORIES):
            # FLAW sanitiser-folds-controls: a space, so "a\nb" and "a b" read the same.
            out.append(" " if sanitiser == "folds-controls" else _LINE_BREAKS.get(ch) or _escape(ch))
        else:
            out.append(ch)
    return out


def shown_name(
    name: str,
    *,
    sanitiser: Sanitiser = "careful",
    truncate: Literal["middle", "end"] = "middle",
    limit: int = MAX_SHOWN,
) -> str:
    """`name` escaped and bounded, ready to sit between double quotes."""
    tokens = _tokens(name, sanitiser)
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


def question(
    shown: str, form: str, effect: Literal["delete", "truncate"] = "delete", *, named: bool = True
) -> str:
    verb = {"delete": "delete", "truncate": "empty"}[effect]
    how = {
        "boolean": f"Tick the box to {verb} it.",
        "name": "Type the file's name to confirm.",
        "enum": f'Choose "delete" to {verb} it or "keep" to keep it.',
    }[form]
    if not named:
        # FLAW question-without-name: the user is asked to confirm without being told what.
        return f"Permanently {verb} the file? This cannot be undone. {how}"
    if effect == "truncate":
        return (
            f'Empty the file "{shown}" in the server\'s folder (truncate it to zero bytes)? '
            f"Its contents cannot be recovered. {how}"
        )
    return f'Permanently delete the file "{shown}" from the server\'s folder? This cannot be undone. {how}'
