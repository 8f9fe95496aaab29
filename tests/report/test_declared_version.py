"""The profile's `version:` is the server's version in the report; what the server reports is shown beside it.

The threat (PyPI trials): a legacy FastMCP server reports the mcp package's version
as its own serverInfo.version, so review.md said `photo-organizer (1.30.0)` where the
profile declares `version: "0.4.0"`: the audit read as if about another release.
"""

from __future__ import annotations

import pytest
from conftest import CONTROLS, GENERATED, RESULTS, TARGET

from mcp_confirm_audit.report import build_report
from mcp_confirm_audit.report.fleet import TargetOutcome, server_of
from mcp_confirm_audit.report.review_md import ReviewMarkdown


def _server_line(declared: str | None, reported: str | None) -> str:
    target = {**TARGET, "version": declared, "server": {"name": "photo-organizer", "version": reported}}
    text = ReviewMarkdown().render(build_report(RESULTS, CONTROLS, target, generated=GENERATED))
    return next(line for line in text.splitlines() if line.startswith("| Server |"))


@pytest.mark.parametrize(
    ("declared", "reported", "shown"),
    [
        ("0.4.0", "1.30.0", "(`0.4.0`, as its profile declares; the server reports `1.30.0`)"),
        ("0.4.0", None, "(`0.4.0`, as its profile declares; the server reports none)"),
        ("0.4.0", "0.4.0", "`photo-organizer` (`0.4.0`)"),
        # Only what the server says: shown as its word, which is often its framework's version.
        (None, "1.30.0", "`photo-organizer` (`1.30.0`, as the server reports it: often its framework's"),
    ],
    ids=["sdk-version-reported", "none-reported", "both-agree", "none-declared"],
)
def test_the_declared_version_wins_and_a_different_reported_one_is_shown_beside_it(
    declared: str | None, reported: str | None, shown: str
) -> None:
    assert shown in _server_line(declared, reported)


def test_the_fleet_summary_names_the_declared_version() -> None:
    audit = {"target": {"version": "0.4.0", "server": {"name": "photo-organizer", "version": "1.30.0"}}}
    assert server_of(TargetOutcome(name="photo", audit=audit)) == "photo-organizer 0.4.0 (declared)"
