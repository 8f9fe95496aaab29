"""Zero configuration: tools classified by what calling them does, not by what they are called.

A tool with no annotations at all is taken for an action, and audited as one,
though many are readers (a config inspector, a status page): then the only
place an action's effect shows is never looked at. A tool whose name reads
like a reader, or whose description says it is read-only (priors, never the
verdict), and that takes no required argument is called twice; when neither call changed anything in the root but
files that only grew (a log, a queue: bookkeeping), and both answered the
same without refusing, it is read-only for this run, and may show an effect.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..confirmations import replies
from ..models import Outcome, Phase, Response, Said
from ..oracle.grown import files, grown
from ..target.driver import Connection, ToolInfo

# A reader's name: the prior that decides which unannotated tools are tried at all.
_READER = re.compile(
    # After one short namespace a server gives all its tools, if any (`wa_list_recipients`, `gh_get_repo`).
    r"^([a-z0-9]{1,6}_)?(list|get|show|read|view|describe|status|inspect|fetch|find|search|count|current|whoami|check)(_|$)|"
    r"_(status|info|config|settings|state|list|summary|overview)$",
    re.I,
)
# A description that says in words the tool only reads ("Read-only. Numbers are masked."): a prior too.
_SAYS_READ_ONLY = re.compile(r"\bread[- ]only\b", re.I)
# Unannotated tools tried, at most.
MAX_TRIED = 4


@dataclass(frozen=True, slots=True)
class Classified:
    """The tools as this run takes them, why, and the files that grew on every call (bookkeeping)."""

    tools: tuple[ToolInfo, ...]
    notes: tuple[str, ...] = ()
    bookkeeping: tuple[tuple[str, str], ...] = ()


async def classify(conn: Connection, tools: Sequence[ToolInfo], root: Path) -> Classified:
    """Unannotated, argument-free tools named like readers, called twice: read-only when nothing moved."""
    tried = [
        t
        for t in tools
        if t.read_only is None
        and t.destructive is None
        and not (t.input_schema or {}).get("required")
        and (_READER.search(t.name) or _SAYS_READ_ONLY.search(t.description or ""))
    ][:MAX_TRIED]
    readers: dict[str, str] = {}
    logs: dict[str, str] = {}
    for tool in tried:
        first, second = files(root), None
        answers: list[Response] = []
        grew: set[str] = set()
        moved: set[str] = set()
        for turn in (1, 2):
            exchange = await conn.call(Phase.SETUP, f"classify: {tool.name} ({turn})", tool.name, {})
            answers.append(exchange.response)
            second = files(root)
            appended, changed = grown(first, second)
            grew = appended if turn == 1 else grew & appended
            moved |= changed
            first = second
        if moved or not all(_answered(r) for r in answers) or _data(answers[0]) != _data(answers[1]):
            continue
        for name in sorted(grew):
            logs.setdefault(
                name, f"grew on each call of {tool.name}, which changed nothing else: bookkeeping"
            )
        log = f"; {', '.join(sorted(grew))} grew on each call (bookkeeping)" if grew else ""
        readers[tool.name] = (
            f"{tool.name}: no annotations; two calls changed nothing and answered alike{log}: "
            "read-only for this run (its name was only the reason to try it)"
        )
    classified = tuple(replace(t, read_only=True) if t.name in readers else t for t in tools)
    return Classified(classified, tuple(readers.values()), tuple(logs.items()))


def _answered(response: Response) -> bool:
    return response.outcome is Outcome.COMPLETE and replies.said(response) is Said.ACTED


def _data(response: Response) -> Any:
    if response.structured is not None:
        return json.dumps(response.structured, sort_keys=True, default=str)
    return response.text
