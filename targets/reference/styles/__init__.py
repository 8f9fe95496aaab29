"""Careful servers written in other styles: the same defences, said differently.

A style is how the server writes a name into its question (which characters it
quotes, how a hidden one shows, what surrounds it), what it says when the user
did not confirm, and whether it keeps its own single-use state. Every style is as
careful as the default; the flaws weaken each in the same way (`--flaw` with
`--style`), so the harness must tell safety from style.

- `quoted` (the default): the name in double quotes, `\\u200b` escapes, markdown
  brackets backslashed.
- `markdown-escaped`: every CommonMark punctuation character backslashed, hidden
  characters as `<U+200B>`, the name in bold.
- `code-span`: the name in a code span whose fence outruns any backtick in it,
  hidden characters as `\\u{200B}`; a refusal is an error, not a result.
- `own-ledger`: its own single-use tickets and refusal texts ("That confirmation
  has been consumed.", "Request declined by operator.").
- `terse`: every path refused before asking is refused in words that name no
  concern (`'.' is not a regular file`).
"""

from __future__ import annotations

from . import code_span, markdown_escaped, own_ledger, quoted, terse
from .style import Style

__all__ = ["STYLES", "Style"]

STYLES: dict[str, Style] = {
    "quoted": quoted.STYLE,
    "markdown-escaped": markdown_escaped.STYLE,
    "code-span": code_span.STYLE,
    "own-ledger": own_ledger.STYLE,
    "terse": terse.STYLE,
}
