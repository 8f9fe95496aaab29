"""A terse style: a path it will not take is refused in a few words that name no concern.

Everything the default refuses before asking (outside the root, a link out of it,
the root itself, a directory, a NUL byte) is refused the same way, as many small
servers write it: `'.' is not a regular file`. The check is as careful as the
default's; only its words say less, so a harness must learn from a benign call
of the same shape that the call was right and the refusal was the check.
"""

from __future__ import annotations

import paths
import prompt

from .style import VERBS, Effect, Style


def _question(shown: str, form: str, effect: Effect, named: bool) -> str:
    how = prompt.how_to_answer(form, VERBS[effect])
    if not named:
        return f"{VERBS[effect].capitalize()} a file? {how}"  # FLAW question-without-name
    return f'{VERBS[effect].capitalize()} "{shown}"? {how}'


def _not_confirmed(effect: Effect, why: str) -> str:
    return f"not done ({why})"


def _done(effect: Effect, shown: str, size: int) -> str:
    return f'{VERBS[effect]}d "{shown}" ({size} bytes)'


def _input_refused(raw: object, refused: paths.Refused) -> str:
    """Whatever the check found, in four words; a path that names nothing still says so."""
    if isinstance(refused, paths.Missing):
        return str(refused)
    return f"{raw!r} is not a regular file"


STYLE = Style(prompt.DOUBLE_QUOTED, _question, _not_confirmed, _done, input_refused=_input_refused)
