"""What the payer reads, and the strict reading of what they answer.

Every string a client chose (recipient, memo, a transfer id) is shown as a JSON
string literal: `json.dumps` with ASCII output escapes line breaks, controls, bidi,
zero-width and every other non-ASCII character as `\\uXXXX`, and the quote and
backslash too, so the value cannot leave its quotes and two values never read alike.
On top of that, as HTML-safe JSON encoders do, `<`, `>`, `&`, `[` and `]` become
`\\u003c`-style escapes and the slash after a colon becomes `\\/`, so no value turns
into markup, a link or a URL. A value longer than `MAX_SHOWN` is shown as its head
and its tail, each quoted, with its length: never as one quoted string, so it cannot
read like a short value.

The `memo-below` style (an email client's way with a body) shows the memo last, below
a line of `---`, as lines of its own: its line feeds kept, each line escaped as above
without its quotes, shown whole however long, nothing of the question's after it. Everything below the `---` is
the memo, so a line it starts cannot pass for one of the question's. Its two flaws
each remove one half of that: `memo-not-last` closes the question with a line of its
own after the memo, `memo-unfenced` shows the memo with no separator above it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ANSWER_KEY",
    "FORM",
    "QUESTIONS",
    "BadAnswer",
    "approves",
    "handle_question",
    "inline",
    "payment_question",
    "quoted",
]

ANSWER_KEY = "payment_approval"
_FIELD = "approve"
FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        _FIELD: {
            "type": "boolean",
            "title": "Send this payment",
            "description": "Tick to send the payment exactly as described; leave unticked to send nothing.",
        }
    },
    "required": [_FIELD],
}
QUESTIONS = ("inline", "memo-below")
MAX_SHOWN = 160
_HEAD = 40
_TAIL = 100
_HTML_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "[": "\\u005b", "]": "\\u005d"})


class BadAnswer(Exception):
    """The content does not match the form that was sent."""


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=True).translate(_HTML_SAFE).replace(":/", ":\\/")


def quoted(text: str, *, raw: bool = False) -> str:
    """`text` as the question shows it; `raw` is the unescaped-memo flaw."""
    if raw:
        return f'"{text}"'  # FLAW unescaped-memo: quotes around it, nothing else
    if len(text) <= MAX_SHOWN:
        return _literal(text)
    return f"{_literal(text[:_HEAD])} … {_literal(text[-_TAIL:])} ({len(text)} characters)"


def inline(text: str) -> str:
    """`text` escaped the same way but without its quotes, for error messages."""
    if len(text) <= MAX_SHOWN:
        return _literal(text)[1:-1]
    return f"{_literal(text[:_HEAD])[1:-1]}…{_literal(text[-_TAIL:])[1:-1]}"


def _amount(cents: int) -> str:
    return f"{cents} cents ({cents // 100}.{cents % 100:02d})"


def _memo_lines(memo: str, *, raw: bool) -> str:
    """The memo's own lines: its line feeds kept, each line escaped without quotes (`raw`: the flaw)."""
    if raw:
        return memo  # FLAW unescaped-memo
    # Only a line feed is kept: a CR, U+2028 or any other break is escaped, so no two memos read alike.
    return "\n".join(_literal(line)[1:-1] for line in memo.split("\n"))


def _memo_below(asked: str, memo: str, *, raw: bool, flaws: frozenset[str]) -> str:
    """`asked`, then the memo last below a `---` line (a flaw: no separator, or a line after the memo)."""
    lines = _memo_lines(memo, raw=raw)
    if "memo-unfenced" in flaws:
        return f"{asked}\n{lines}"  # FLAW memo-unfenced: no separator above the memo
    if "memo-not-last" in flaws:
        # FLAW memo-not-last: the question's own line after the memo, where a memo's line can pass for one
        return f"{asked}\n---\n{lines}\n---\nApprove? Nothing is sent until you do."
    return f"{asked}\n---\n{lines}"


def payment_question(
    recipient: str,
    amount_cents: int,
    memo: str,
    *,
    raw: bool = False,
    style: str = "inline",
    flaws: frozenset[str] = frozenset(),
) -> str:
    asked = f"Send a payment of {_amount(amount_cents)} to {quoted(recipient, raw=raw)}?"
    if style == "memo-below":
        return _memo_below(
            f"{asked}\nA sent payment cannot be recalled. Its memo:", memo, raw=raw, flaws=flaws
        )
    return f"{asked}\nMemo: {quoted(memo, raw=raw)}\nA sent payment cannot be recalled."


def handle_question(
    transfer_id: str,
    recipient: str,
    amount_cents: int,
    memo: str,
    *,
    raw: bool = False,
    style: str = "inline",
    flaws: frozenset[str] = frozenset(),
) -> str:
    asked = (
        f"Execute the staged transfer {quoted(transfer_id)}?\n"
        f"It pays {_amount(amount_cents)} to {quoted(recipient, raw=raw)}."
    )
    if style == "memo-below":
        return _memo_below(
            f"{asked}\nAn executed transfer cannot be recalled. Its memo:", memo, raw=raw, flaws=flaws
        )
    return f"{asked}\nMemo: {quoted(memo, raw=raw)}\nAn executed transfer cannot be recalled."


def approves(content: Mapping[str, Any] | None) -> bool:
    """True for `{"approve": true}`, False for `{"approve": false}`, BadAnswer for anything else."""
    if not isinstance(content, Mapping):
        raise BadAnswer("the answer has no content")
    extra = sorted(set(content) - {_FIELD})
    if extra:
        raise BadAnswer(f"the answer has fields the form did not ask for: {extra}")
    if _FIELD not in content:
        raise BadAnswer(f"the answer is missing {_FIELD!r}")
    value = content[_FIELD]
    if value is True or value is False:  # a JSON boolean, never 1 or "true"
        return value
    raise BadAnswer(f"{_FIELD!r} must be a JSON boolean")
