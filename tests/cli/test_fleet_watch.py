"""Fleets you can watch and read: progress lines, fleet.md and fleet.html with the grid of target by
family and a link to each review, a record per target, --matrix from a FLEET.yaml in a subfolder,
and --timeout stopping a run as Ctrl-C does.

The fleet run is the one test_fleet.py reads too (`fleet_run`, tests/cli/conftest.py): the five
cheap targets of tests/cli/fleets.py, two at a time, each with the controls and one attack.
"""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import uuid
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml
from deadline import deadline
from fleets import NAMES, REPO, cli, write_fleet
from leftovers import survivors
from markdown_it import MarkdownIt

from mcp_confirm_audit.cli import fleet as fleet_module
from mcp_confirm_audit.cli.main import main
from mcp_confirm_audit.report.fleet import TargetOutcome, markdown
from mcp_confirm_audit.report.fleet_html import html

HOSTILE = REPO / "targets" / "hostile" / "server.py"


def test_a_fleet_prints_a_line_as_each_target_starts_and_as_it_ends(
    fleet_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    run, _ = fleet_run
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    for number, name in enumerate(NAMES, start=1):
        assert f"[{number}/{len(NAMES)}] {name}: started" in lines
    ended = {
        m.group(1): m.group(2)
        for line in lines
        if (m := re.match(rf"\[\d/{len(NAMES)}\] (\S+): (?!started)(.*)", line))
    }
    assert set(ended) == set(NAMES)
    assert ended["careful"].startswith("clean, 0 finding(s)")
    assert ended["no-ledger"].startswith("findings, 1 finding(s)")
    assert ended["never-starts"].startswith("failed: exit 2: mcp-confirm-audit: ")
    # Each target's end comes after its start.
    for name in NAMES:
        starts = lines.index(next(line for line in lines if line.endswith(f"] {name}: started")))
        ends = lines.index(next(line for line in lines if f"] {name}: " in line and "started" not in line))
        assert starts < ends


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[str] = []
        self.cells: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.links.append(dict(attrs)["href"] or "")

    def handle_data(self, data: str) -> None:
        if data.strip():
            self.cells.append(data.strip())


def test_fleet_md_and_html_show_the_grid_by_family_links_to_each_review_and_versions(
    fleet_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, out = fleet_run
    table = (out / "fleet.md").read_text()
    assert "## By family: the worst verdict in each cell" in table
    grid = table.split("## By family")[1]
    assert re.search(r"^\| `no-ledger` \|(.*\|)? vulnerable \|", grid, re.MULTILINE)
    assert re.search(r"^\| `never-starts` \| failed \|", grid, re.MULTILINE)
    for name in NAMES[:-1]:
        assert f"[review.md]({name}/review.md)" in table
        assert (out / name / "review.md").is_file()
    # The server's name and version, as it reports them.
    server = json.loads((out / "careful" / "audit.json").read_text())["target"]["server"]
    shown = f"{server['name']} {server['version']}" if server.get("version") else server["name"]
    assert f"| `careful` | `{shown}` |" in table
    page = _Page()
    page.feed((out / "fleet.html").read_text())
    assert "script" not in page.tags
    assert sorted(page.links) == sorted(f"{name}/review.md" for name in NAMES[:-1])
    assert "vulnerable" in page.cells
    assert "never-starts" in page.cells


def test_each_target_leaves_a_record_a_registry_can_store(
    fleet_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    _, out = fleet_run
    record = json.loads((out / "no-ledger" / "record.json").read_text())
    assert set(record) >= {"target", "version", "digest", "catalogue", "verdicts", "started", "seconds"}
    assert record["target"] == "no-ledger"
    assert record["digest"].startswith("sha256:")
    assert record["catalogue"]["digest"].startswith("sha256:")
    assert record["verdicts"]["vulnerable"] == 1
    assert "inconclusive" in record["verdicts"]
    failed = json.loads((out / "never-starts" / "record.json").read_text())
    assert (failed["status"], failed["digest"], failed["verdicts"]) == ("failed", None, None)
    summary = json.loads((out / "fleet.json").read_text())
    assert [t["record"]["target"] for t in summary["targets"]] == NAMES


def test_matrix_paths_are_relative_to_where_the_job_runs_not_to_the_fleet_file(tmp_path: Path) -> None:
    write_fleet(tmp_path)
    run = cli(tmp_path, "fleet", "ci/FLEET.yaml", "--matrix", timeout=deadline(120))
    assert run.returncode == 0, run.stderr
    jobs = {job["name"]: job for job in json.loads(run.stdout)["include"]}
    assert jobs["in-process"]["profile"] == "ci/targets/in-process.yaml"
    assert (tmp_path / jobs["in-process"]["profile"]).is_file()
    inside = cli(tmp_path / "ci", "fleet", "FLEET.yaml", "--matrix", timeout=deadline(120))
    [in_process] = [job for job in json.loads(inside.stdout)["include"] if job["name"] == "in-process"]
    assert in_process["profile"] == "targets/in-process.yaml"


def test_fleet_html_escapes_every_target_string(tmp_path: Path) -> None:
    hostile = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    audit = {
        "target": {"server": {"name": hostile, "version": hostile}},
        "summary": {"judged": hostile},
        "results": [{"id": "MCA-REPLAY-001", "family": "replay", "variant": "v", "verdict": "refused"}],
    }
    outcomes = [
        TargetOutcome("a", audit=audit, folder=str(tmp_path / "a")),
        TargetOutcome("b", failure=hostile, folder=str(tmp_path / "b")),
    ]
    page = html(outcomes, tmp_path)
    assert "<script" not in page
    assert "<img" not in page
    assert "&lt;script&gt;" in page
    parsed = _Page()
    parsed.feed(page)
    assert set(parsed.tags) <= {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "h1",
        "h2",
        "p",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "code",
        "a",
    }
    # fleet.md shows them in code spans: rendered, no tag comes out of them.
    rendered = MarkdownIt("commonmark").enable("table").render(markdown(outcomes, tmp_path))
    assert "<script" not in rendered
    assert "<img" not in rendered


def test_fleet_timeout_stops_a_run_as_ctrl_c_does_and_leaves_no_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"fleet-timeout-{uuid.uuid4().hex}"
    silent = shlex.join(
        [sys.executable, str(HOSTILE), "--root", "{root}", "--mode", "silent", "--marker", marker]
    )
    fleet = {"targets": [{"name": "silent", "command": silent, "args": ["--mcp-start-timeout=600"]}]}
    (tmp_path / "FLEET.yaml").write_text(yaml.safe_dump(fleet))
    # Both bounds from the suite's scale: the run must be past its start when SIGTERM comes, and a
    # loaded machine may need longer than the quiet one's grace to end the target and write.
    timeout = deadline(5)
    monkeypatch.setattr(fleet_module, "STOP_GRACE", deadline(fleet_module.STOP_GRACE))
    code = main(
        ["fleet", str(tmp_path / "FLEET.yaml"), "-o", str(tmp_path / "out"), "--timeout", f"{timeout:g}"]
    )
    assert code == pytest.ExitCode.TESTS_FAILED
    assert survivors(marker) == []
    status = json.loads((tmp_path / "out" / "silent" / "fleet-status.json").read_text())
    assert status["failure"] == f"did not finish within {timeout:g}s: stopped (see run.log)"
    # SIGTERM reached the run as Ctrl-C: pytest's interrupted exit, or (if it came before pytest
    # had started) Python's own exit on KeyboardInterrupt; never a kill.
    assert status["exit_code"] in (pytest.ExitCode.INTERRUPTED, -signal.SIGINT)
