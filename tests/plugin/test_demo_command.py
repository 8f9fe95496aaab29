"""The README's audit command, as a newcomer runs it: an empty directory, a real PyPI server."""

from __future__ import annotations

import json

import pytest


def test_the_readme_audit_of_mcp_confirm_runs_the_catalogue_and_writes_audit_json(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest(
        "--mcp-target",
        "mcp-confirm --root {root}",
        "--mcp-report-dir",
        "reports/mcp-confirm",
        "-W",
        "default",
    )
    # mcp-confirm reads its confirm box by truthiness: real findings, so pytest exits 1.
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*which layer refused each attack*", "report: reports/mcp-confirm/audit.json"]
    )
    report = json.loads((pytester.path / "reports" / "mcp-confirm" / "audit.json").read_text())
    assert report["target"]["server"]["name"] == "mcp-confirm"
    assert all(c["passed"] for c in report["controls"])
    families = {r["family"] for r in report["results"]}
    assert {
        "replay",
        "cross-target",
        "forged-state",
        "fabricated-approval",
        "consent",
        "out-of-root",
    } <= families
    assert any(r["verdict"] == "vulnerable" and r["family"] == "consent" for r in report["results"])
