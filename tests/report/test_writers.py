"""Every writer, rendered from a fixed run and compared with its golden file.

Run with MCA_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate
change, then read the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcp_confirm_audit.report import WRITERS, AuditReport, Writer

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: w.filename)
def test_each_writer_matches_its_golden_file(writer: Writer, report: AuditReport) -> None:
    rendered = writer.render(report)
    golden = GOLDEN / writer.filename
    if os.environ.get("MCA_UPDATE_GOLDEN"):
        golden.write_text(rendered, encoding="utf-8")
    assert rendered == golden.read_text(encoding="utf-8"), (
        f"{golden.name} changed: rerun with MCA_UPDATE_GOLDEN=1"
    )


@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: w.filename)
def test_no_temporary_sandbox_path_leaks_into_a_report(writer: Writer, report: AuditReport) -> None:
    rendered = writer.render(report)
    assert "mcp-audit-" not in rendered
    assert "{sandbox}/root/005-mca-replay-001/victim.txt" in rendered


def test_the_render_is_byte_stable_and_the_clock_is_the_one_given(report: AuditReport) -> None:
    for writer in WRITERS:
        assert writer.render(report) == writer.render(report)
    assert json.loads(WRITERS[0].render(report))["generated"] == "2026-07-28T12:00:00+00:00"
