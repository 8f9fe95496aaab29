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
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        where = f" (line {line + 1})" if line is not None else ""
        raise UsageError(f"{what} {path} is not valid {kind}{where}: fix the syntax") from None
