"""Report writers: consumers of results, one module per format.

Each writer takes the same three things (results, controls, target) and
writes one file; none of them runs anything or imports pytest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..models import ControlResult, Result
from .audit_json import AuditJson
from .terminal import summary


class Writer(Protocol):
    filename: str

    def render(self, results: Sequence[Result], controls: Sequence[ControlResult], target: Mapping[str, Any]) -> str: ...


WRITERS: tuple[Writer, ...] = (AuditJson(),)


def write_reports(
    directory: Path, results: Sequence[Result], controls: Sequence[ControlResult], target: Mapping[str, Any]
) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: (r.tool, r.id))
    paths = []
    for writer in WRITERS:
        path = directory / writer.filename
        path.write_text(writer.render(ordered, controls, target))
        paths.append(path)
    return paths


__all__ = ["WRITERS", "Writer", "summary", "write_reports"]
