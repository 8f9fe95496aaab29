"""The review checked into reports/mcp-confirm/ is valid, names the pinned release, and is not stale."""

from __future__ import annotations

import json
import re
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

from conftest import REGENERATE, ROOT

REVIEW = ROOT / "reports" / "mcp-confirm"


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


def test_the_checked_in_review_refuses_nothing_in_an_era_the_server_does_not_serve() -> None:
    # mcp-confirm answers a 2025-11-25 client with -32603: its honest flow never completes there,
    # so protocol-downgrade is not applicable, quoting the reply, and never refused by "protocol".
    results = json.loads((REVIEW / "audit.json").read_text())["results"]
    eras = [r for r in results if r["family"] == "protocol-downgrade"]
    assert len(eras) == 5
    for result in eras:
        assert result["verdict"] == "not_applicable", result
        assert result["reason"].startswith("the target completes no honest flow over 2025-11-25: "), result


# What may differ between two runs of the same command: the date, and the
# request states the server seals with a fresh nonce (and so the length of a
# shortened evidence line that quotes one).
_VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\+00:00|Z)"), "<date>"),
    (re.compile(r"v1\.[A-Za-z0-9_\-]+"), "v1.<token>"),
    (re.compile(r"\(\d+ chars; whole in audit\.json\)"), "(<n> chars; whole in audit.json)"),
    # The confinement regime: what this machine's kernel allows (target/confine.py), the one line of the head.
    (re.compile(r"^\| Confinement \| .* \|$", re.MULTILINE), "| Confinement | <regime> |"),
    (re.compile(r'"confinement": "[^"]*"'), '"confinement": "<regime>"'),
]


def _stable(text: str) -> str:
    for pattern, placeholder in _VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


def test_the_readme_command_as_written_regenerates_the_checked_in_review_byte_for_byte(
    readme_review: Path,
) -> None:
    # REGENERATE, word for word, but into a temporary directory (conftest.py's readme_review,
    # run once for this test and test_mcp_confirm.py's).
    fresh = readme_review / "report"
    output = (readme_review / "output").read_text()
    assert (readme_review / "returncode").read_text() == "1", output  # findings: the expected outcome
    for name in ("review.md", "audit.sarif"):
        fresh_text, checked_in = (fresh / name).read_text(), (REVIEW / name).read_text()
        assert _stable(fresh_text) == _stable(checked_in), (
            f"reports/mcp-confirm/{name} is stale: run `{REGENERATE}`"
        )
    fresh_results = json.loads((fresh / "audit.json").read_text())["results"]
    checked_results = json.loads((REVIEW / "audit.json").read_text())["results"]
    assert [(r["id"], r["verdict"], r["layer"]) for r in fresh_results] == [
        (r["id"], r["verdict"], r["layer"]) for r in checked_results
    ]
