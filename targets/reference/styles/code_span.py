"""A code-span style: the name quoted as code, hidden characters as `\\u{200B}`.

Inside a code span markdown is not interpreted, so brackets and angle brackets need
no escape; the fence is one backtick longer than any run of backticks in the name,
so the name cannot close it. Only the backslash is escaped, so that `\\u{...}` can
only come from a hidden character.
"""

from __future__ import annotations

import re

import prompt
from mcp.server.mcpserver.exceptions import ToolError

from .style import VERBS, Effect, Style

ESCAPING = prompt.Escaping(
    quote=lambda ch: "\\\\" if ch == "\\" else None, visible=lambda ch: f"\\u{{{ord(ch):04X}}}"
)


def code_span(text: str) -> str:
    """`text` as a CommonMark code span that shows exactly `text`."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    # A space either side when the text starts or ends with a backtick or a space:
    # CommonMark strips exactly one from each side again.
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _question(shown: str, form: str, effect: Effect, named: bool) -> str:
    verb = VERBS[effect]
    how = prompt.how_to_answer(form, verb)
    if not named:
        return f"A file will be {verb}d. {how}"  # FLAW question-without-name
    return f"The file {code_span(shown)} will be {'deleted' if effect == 'delete' else 'emptied'}. {how}"


def _not_confirmed(effect: Effect, why: str) -> str:
    raise ToolError(f"not confirmed ({why}); the file is unchanged")


def _done(effect: Effect, shown: str, size: int) -> str:
    return f"{'deleted' if effect == 'delete' else 'emptied'} {code_span(shown)} ({size} B)"


STYLE = Style(ESCAPING, _question, _not_confirmed, _done)
