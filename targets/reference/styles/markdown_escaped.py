"""A markdown escaper's style: every CommonMark punctuation character backslashed, `<U+200B>`.

What common markdown escapers do to `_ * ~ # | !` and the brackets, done for all of
ASCII punctuation (CommonMark lets a backslash escape any of it). `<` is punctuation,
so a `<U+XXXX>` stand-in can only come from a hidden character: the mapping stays
injective.
"""

from __future__ import annotations

import string

import prompt

from .style import VERBS, Effect, Style

_PUNCTUATION = frozenset(string.punctuation)  # CommonMark's ASCII punctuation characters


def _visible(ch: str) -> str:
    return f"<U+{ord(ch):04X}>"


ESCAPING = prompt.Escaping(quote=lambda ch: "\\" + ch if ch in _PUNCTUATION else None, visible=_visible)


def _question(shown: str, form: str, effect: Effect, named: bool) -> str:
    verb = VERBS[effect]
    how = prompt.how_to_answer(form, verb)
    if not named:
        return f"**{verb.capitalize()}** a file in the workspace? {how}"  # FLAW question-without-name
    return f"**{verb.capitalize()}** the file **{shown}** in the workspace?\n\nThere is no undo. {how}"


def _not_confirmed(effect: Effect, why: str) -> str:
    return f"Kept the file ({why})."


def _done(effect: Effect, shown: str, size: int) -> str:
    return f"{'Removed' if effect == 'delete' else 'Emptied'} **{shown}**: {size} bytes."


STYLE = Style(ESCAPING, _question, _not_confirmed, _done)
