"""Report writers: consumers of results, one module per format.

Each writer renders one `AuditReport` (results, controls, target, baseline
marks, a timestamp) into one file; none of them runs anything or imports
pytest. They are called once per run, on the controller.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .audit_json import AuditJson
from .document import AuditReport, build_report
from .review_md import ReviewMarkdown
from .sarif import Sarif
from .terminal import summary


class Writer(Protocol):
    filename: str

    def render(self, report: AuditReport) -> str: ...


WRITERS: tuple[Writer, ...] = (AuditJson(), ReviewMarkdown(), Sarif())


def write_reports(directory: Path, report: AuditReport) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for writer in WRITERS:
        path = directory / writer.filename
        path.write_text(writer.render(report), encoding="utf-8")
        paths.append(path)
    return paths


__all__ = ["WRITERS", "AuditReport", "Writer", "build_report", "summary", "write_reports"]
