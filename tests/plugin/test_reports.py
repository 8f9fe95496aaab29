"""A run against a flawed reference server hands over three files and JUnit properties."""

from __future__ import annotations

import json
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

# Each Python stdio target of the in-process runs forked from the SDK's zygote (tests/forking.py).
pytestmark = pytest.mark.usefixtures("forked_targets")

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"


def target(*options: str) -> str:
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


def test_a_flawed_server_gets_all_three_reports_and_each_is_valid(
    pytester: pytest.Pytester, audit_errors: Any, sarif_errors: Any
) -> None:
    run = pytester.runpytest(
        "--mcp-target",
        target("--flaw", "no-ledger"),
        "--mcp-report-dir",
        "out",
        "-k",
        "MCA-REPLAY-001 or MCA-REPLAY-002 or MCA-REPLAY-003 or FORGE-001 or control",
        "--junitxml",
        "junit.xml",
    )
    assert run.ret == pytest.ExitCode.TESTS_FAILED
    out = pytester.path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["audit.json", "audit.sarif", "review.md"]
    run.stdout.fnmatch_lines(
        [
            "verdicts: refused 1, vulnerable 3",
            "refused by: sdk-boundary 1",
            "report: out*audit.json",
            "report: out*review.md",
            "report: out*audit.sarif",
        ]
    )

    audit = json.loads((out / "audit.json").read_text())
    assert audit_errors(audit) == []
    assert audit["target"]["server"]["name"] == "mcp-confirm-reference"
    assert audit["target"]["tools"] == ["delete_file"]
    assert "mcp-audit-" not in (out / "audit.json").read_text()

    sarif = json.loads((out / "audit.sarif").read_text())
    assert sarif_errors(sarif) == []
    found = {r["ruleId"]: r["level"] for r in sarif["runs"][0]["results"]}
    assert found == {"MCA-REPLAY-001": "error", "MCA-REPLAY-002": "error", "MCA-REPLAY-003": "error"}

    review = (out / "review.md").read_text()
    assert "## Which layer refused each attack" in review
    assert "| MCA-FORGE-001 | random-token | `delete_file` | refused | sdk-boundary | no |" in review
    for attack_id in ("MCA-REPLAY-001", "MCA-REPLAY-002", "MCA-REPLAY-003"):
        assert f"#### {attack_id} " in review
        assert f"-k '{attack_id} and delete_file'" in review
    assert "[attack] " in review
    assert "disk removed: root/" in review

    junit = ET.parse(pytester.path / "junit.xml")
    case = next(c for c in junit.iter("testcase") if "MCA-REPLAY-002" in c.get("name", ""))
    properties = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert properties["mcp.id"] == "MCA-REPLAY-002"
    assert properties["mcp.family"] == "replay"
    assert properties["mcp.verdict"] == "vulnerable"
    assert properties["mcp.layer"] == "none"


def test_a_report_dir_without_any_audit_item_run_writes_nothing(pytester: pytest.Pytester) -> None:
    run = pytester.runpytest("--mcp-target", target(), "--mcp-report-dir", "out", "-k", "no-such-attack")
    assert run.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert not (pytester.path / "out").exists()
