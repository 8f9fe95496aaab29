"""Reading a user's YAML (or JSON) file, with one line that says what is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import UsageError


def read_yaml(path: Path, what: str, missing: str, kind: str = "YAML") -> Any:
    """The parsed file; a UsageError naming `what`, with `missing` as the fix when there is no file."""
    try:
        return yaml.safe_load(path.read_text())
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
