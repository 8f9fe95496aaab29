"""SARIF locations are relative to the repository (`uriBaseId` %SRCROOT%), so code scanning places
every alert: never a bare absolute path, never a path that climbs out with `../`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_confirm_audit.report import AuditReport
from mcp_confirm_audit.report.sarif import SRCROOT, Sarif, in_repository, repository_root


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "ci" / "targets").mkdir(parents=True)
    (tmp_path / "repo" / "src").mkdir()
    return tmp_path / "repo"


def test_a_profile_named_from_a_subfolder_is_placed_relative_to_the_repository(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "ci")
    assert repository_root() == repo.resolve()
    assert in_repository("targets/server.yaml") == "ci/targets/server.yaml"
    assert in_repository("../src/server.py") == "src/server.py"
    assert in_repository(str(repo / "src" / "server.py")) == "src/server.py"


def test_a_file_outside_the_repository_falls_back_to_its_readme(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    assert in_repository("../elsewhere/server.yaml") == "README.md"
    assert in_repository("/opt/servers/server.py") == "README.md"


def test_in_actions_the_workspace_is_the_repository(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo / "ci")
    monkeypatch.setenv("GITHUB_WORKSPACE", str(repo / "ci"))
    assert in_repository("targets/server.yaml") == "targets/server.yaml"


def test_every_result_of_the_sarif_is_placed_under_the_repository_base(
    report: AuditReport, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "ci")
    run = json.loads(Sarif().render(report))["runs"][0]
    assert SRCROOT in run["originalUriBaseIds"]
    locations = [
        loc["physicalLocation"]["artifactLocation"] for r in run["results"] for loc in r["locations"]
    ]
    assert locations
    assert all(loc == {"uri": "ci/targets/example.yaml", "uriBaseId": SRCROOT} for loc in locations)
