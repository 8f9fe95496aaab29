"""The default style: the name in double quotes, escapes as `\\u200b`."""

from __future__ import annotations

import prompt

from .style import Effect, Style

_NOTHING: dict[Effect, str] = {"delete": "Nothing was deleted", "truncate": "Nothing was truncated"}


def _question(shown: str, form: str, effect: Effect, named: bool) -> str:
    return prompt.question(shown, form, effect, named=named)


def _not_confirmed(effect: Effect, why: str) -> str:
    chose = "to keep the file" if why == "keep" else why
    return f"{_NOTHING[effect]}: the user chose {chose}."


def _done(effect: Effect, shown: str, size: int) -> str:
    if effect == "truncate":
        return f'Emptied "{shown}" ({size} bytes removed).'
    return f'Deleted "{shown}" ({size} bytes).'


STYLE = Style(prompt.DOUBLE_QUOTED, _question, _not_confirmed, _done)
