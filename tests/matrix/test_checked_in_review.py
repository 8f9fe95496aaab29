"""The review checked into reports/mcp-confirm/ is valid, names the pinned release, and is not stale."""

from __future__ import annotations

import json
import re
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

from mcp_confirm_audit.catalogue import Catalogue
from mcp_confirm_audit.profile import load_profile
from mcp_confirm_audit.session import run_audit

ROOT = Path(__file__).resolve().parents[2]
REVIEW = ROOT / "reports" / "mcp-confirm"
REGENERATE = "mcp-confirm-audit run --profile targets/mcp-confirm.yaml --report-dir reports/mcp-confirm"


def test_the_checked_in_reports_validate(audit_errors: Any, sarif_errors: Any) -> None:
    assert audit_errors(json.loads((REVIEW / "audit.json").read_text())) == []
    assert sarif_errors(json.loads((REVIEW / "audit.sarif").read_text())) == []
    review = (REVIEW / "review.md").read_text()
    assert "## Which layer refused each attack" in review
    assert "mcp-audit-" not in review


def test_the_review_is_of_the_release_the_demo_extra_pins() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = [re.fullmatch(r"mcp-confirm==(.+)", d) for d in extras["demo"]]
    pinned = next(p for p in pins if p is not None)
    audit = json.loads((REVIEW / "audit.json").read_text())
    assert audit["target"]["profile"] == "targets/mcp-confirm.yaml"
    assert audit["target"]["version"] == pinned.group(1) == metadata.version("mcp-confirm")


def test_the_checked_in_review_matches_a_fresh_audit(catalogue: Catalogue, monkeypatch: Any) -> None:
    monkeypatch.chdir(ROOT)
    fresh = run_audit(load_profile(Path("targets/mcp-confirm.yaml")), catalogue=catalogue)
    audit = json.loads((REVIEW / "audit.json").read_text())
    checked_in = [(r["id"], r["tool"], r["verdict"], r["layer"]) for r in audit["results"]]
    now = sorted((r.id, r.tool, r.verdict.value, r.layer.value if r.layer else None) for r in fresh.results)
    assert checked_in == now, f"reports/mcp-confirm is stale: regenerate it with `{REGENERATE}`"
