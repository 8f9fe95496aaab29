"""Reading a user's YAML (or JSON) file, with one line that says what is wrong.

A value that looks like a date (`protocol: 2025-11-25`, `version: 2024-05-01`) stays the text
written: every key of ours that takes such a value takes a string, and a user writes it unquoted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import UsageError


class _TextDates(yaml.SafeLoader):
    """YAML's safe loader without its timestamp type: `2025-11-25` is the string `"2025-11-25"`."""


_TextDates.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_text(text: str) -> Any:
    """`text` parsed as YAML, dates left as the text written."""
    return yaml.load(text, Loader=_TextDates)  # a SafeLoader with one implicit type less


def read_yaml(path: Path, what: str, missing: str, kind: str = "YAML") -> Any:
    """The parsed file; a UsageError naming `what`, with `missing` as the fix when there is no file."""
    try:
        return load_text(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"{what} {path} does not exist; {missing}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{what} {path} is not valid {kind}{_where(exc)}: fix the syntax there") from None


def _where(exc: yaml.YAMLError) -> str:
    """The parser's own line, column and reason: ' (line 3, column 7: expected ',' or ']')'."""
    mark = getattr(exc, "problem_mark", None)
    at = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    reason = " ".join(str(getattr(exc, "problem", "") or "").split())
    said = ": ".join(part for part in (at, reason) if part)
    return f" ({said})" if said else ""
