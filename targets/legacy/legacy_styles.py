"""The careful legacy server written in other styles: the same defences, said and shaped another way.

    python targets/legacy/server.py --root DIR --style NAME

A style changes what the harness must not depend on, never what the server
checks. `plain` is the server as its docstring describes it. The others:

  enum-worded   the form is a choice ("delete" or "keep", with an optional
                reason) instead of a boolean; refusals are raised in words of
                its own ("Request declined by operator.", "Target modified
                since approval was requested.")
  error-result  the form asks to type the file's name; every refusal, a
                decline included, is returned as a result with isError set
                instead of raised
  logbook       the plain form, and one JSON line per tools/call appended to
                ROOT/legacy-audit.jsonl: bookkeeping the controls must learn,
                never an effect
  bare-accept   the form has no field at all: the person's accept is the yes
                and decline or cancel the no, as a confirmation sent with no
                response type asks (FastMCP's `ctx.elicit(message,
                response_type=None)`, an SDK form with an empty schema); the
                content is never read, since it has nothing to say

Each is held to zero `vulnerable` and zero `weak` over the whole catalogue on
the elicitation driver by tests/matrix/test_legacy_styles.py.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import forms

# What the plain server says; a style may say any of them in words of its own.
PLAIN_WORDS: dict[str, str] = {
    "declined": "not deleted: the person answered {action}",
    "changed": "the file changed after the question; nothing was deleted, ask again",
    "no-capability": "this client cannot ask a person (it declared no form elicitation); nothing was deleted",
    "expired": "no answer within {seconds:g}s: the question has expired; nothing was deleted",
    "bad-answer": "not deleted: {why}",
    "deleted": "deleted {rel}",
    "too-fast": "answered {ms} ms after the question, faster than a person reads it; nothing was deleted",
}


@dataclass(frozen=True, slots=True)
class Style:
    name: str
    # None: the plain server's one-field boolean form (the one its form flaws change).
    form: forms.FormKind | None = None
    refuses: Literal["raise", "result"] = "raise"
    # How a decline (or an answer that says no) ends the call: a plain result, or as a refusal.
    declines: Literal["text", "refusal"] = "text"
    words: Mapping[str, str] = field(default_factory=dict)
    log: str | None = None
    # The form asks nothing: the answer's action is the whole decision (see `bare-accept`).
    bare: bool = False

    def say(self, what: str, **values: Any) -> str:
        return {**PLAIN_WORDS, **self.words}[what].format(**values)


STYLES: dict[str, Style] = {
    "plain": Style("plain"),
    "enum-worded": Style(
        "enum-worded",
        form="enum",
        declines="refusal",
        words={
            "declined": "Request declined by operator.",
            "changed": "Target modified since approval was requested.",
            "no-capability": "Operator approval unavailable: client lacks form elicitation.",
            "expired": "Approval window elapsed ({seconds:g}s).",
            "bad-answer": "Request rejected: {why}.",
            "deleted": "Removed {rel}.",
        },
    ),
    "error-result": Style(
        "error-result",
        form="name",
        refuses="result",
        declines="refusal",
        words={"declined": "Declined ({action}); the file stays.", "bad-answer": "Refused: {why}."},
    ),
    "logbook": Style("logbook", log="legacy-audit.jsonl"),
    "bare-accept": Style("bare-accept", bare=True),
}

# The form of the `bare-accept` style: an object with no fields.
BARE_FORM: dict[str, Any] = {"type": "object", "properties": {}}


def reading(style: Style, content: Any, base_name: str, *, ask_secret: bool, truthy: bool) -> str | None:
    """A style's own form, read strictly: None if it says yes, else why not."""
    assert style.form is not None
    mapping = content if isinstance(content, Mapping) else None
    try:
        yes = forms.approves(style.form, mapping, base_name, ask_secret=ask_secret, truthy=truthy)
    except forms.BadAnswer as exc:
        return style.say("bad-answer", why=str(exc))
    return None if yes else style.say("declined", action="keep")


def schema(style: Style, *, ask_secret: bool) -> dict[str, Any]:
    assert style.form is not None
    return forms.schema(style.form, ask_secret=ask_secret)


def record(style: Style, root: Path, tool: str, arguments: Mapping[str, Any], outcome: str) -> None:
    """One line of the style's log in the root, if it keeps one."""
    if style.log is None:
        return
    line = {"at": time.time(), "tool": tool, "arguments": dict(arguments), "outcome": outcome}
    with (root / style.log).open("a", encoding="utf-8") as log:
        log.write(json.dumps(line) + "\n")
