"""The pytest plugin: options, markers, and nothing else unless a target is given.

It loads in every pytest run on a machine where the package is installed, so
without --mcp-target or --mcp-profile it must stay inert.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from .catalogue import family_names, load_catalogue
from .collect import (
    CONTROL_PROPERTY,
    RESULT_PROPERTY,
    SESSION_KEY,
    STRICT_KEY,
    AttackItem,
    AuditCollector,
    ControlItem,
    family_marker,
)
from .errors import TargetError, UsageError
from .generation import DEFAULT_EXAMPLES, Generation, generation_for
from .models import ControlResult, Result
from .profile import ROOT_FROM, Profile, load_profile, resolve_profile
from .report import summary, write_reports
from .session import AuditSession

_OPTIONS: list[tuple[str, dict[str, Any], str]] = [
    ("--mcp-target", {"metavar": "CMD"}, "the MCP server under test: a command with {root}, a URL, or py:module:factory"),
    ("--mcp-profile", {"metavar": "FILE"}, "a target profile (YAML); --mcp-target overrides its command"),
    ("--mcp-root-from", {"choices": ROOT_FROM}, "how the target learns its root: 'arg' ({root} in the command) or 'cwd'"),
    ("--mcp-report-dir", {"metavar": "DIR"}, "write audit.json (and the other reports) into DIR"),
    ("--mcp-call-timeout", {"metavar": "SECONDS", "type": float}, "seconds to wait for any one round trip"),
    ("--mcp-examples", {"metavar": "N", "type": int},
     f"hostile names generated per prompt-forging attack (default {DEFAULT_EXAMPLES})"),
    ("--mcp-seed", {"metavar": "S", "type": int},
     "seed for generated names; each run prints its own (CI=true fixes it), pass it to repeat a run"),
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-confirm-audit", "MCP confirmation security audit")
    for flag, extra, help_text in _OPTIONS:
        dest = flag.lstrip("-").replace("-", "_")
        group.addoption(flag, dest=dest, default=None, help=help_text, **extra)
        parser.addini(dest, help=f"{help_text} (ini twin of {flag})", default=None)
    group.addoption("--mcp-strict", dest="mcp_strict", action="store_true", default=None,
                    help="fail on weak results (SHOULD-level failures), not only on vulnerable ones")
    parser.addini("mcp_strict", help="ini twin of --mcp-strict", type="bool", default=False)


def _setting(config: pytest.Config, name: str) -> Any:
    value = config.getoption(name)
    return value if value is not None else config.getini(name)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mcp_audit: an attack or control run by mcp-confirm-audit")
    config.addinivalue_line("markers", "mcp_control: an honest-flow control of mcp-confirm-audit")
    for family in family_names():
        config.addinivalue_line("markers", f"{family_marker(family)}: mcp-confirm-audit {family} attacks")
    target, profile_path = _setting(config, "mcp_target"), _setting(config, "mcp_profile")
    if not target and not profile_path:
        return
    try:
        profile = load_profile(Path(profile_path)) if profile_path else None
        profile = resolve_profile(profile, target, _setting(config, "mcp_root_from"))
        if timeout := _setting(config, "mcp_call_timeout"):
            profile = replace(profile, call_timeout=float(timeout))
        # xdist workers take the controller's seed, so every worker draws the same names.
        seed = _setting(config, "mcp_seed")
        if seed is None:
            seed = getattr(config, "workerinput", {}).get("mcp_seed")
        generation = generation_for(_setting(config, "mcp_examples"), seed, os.environ)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[STRICT_KEY] = bool(_setting(config, "mcp_strict"))
    config.pluginmanager.register(_Audit(config, profile, generation), "mcp-confirm-audit-run")


class _Audit:
    """Registered only when a target is given: collects, runs, and reports."""

    def __init__(self, config: pytest.Config, profile: Profile, generation: Generation) -> None:
        self.config = config
        self.profile = profile
        self.generation = generation
        self.session: AuditSession | None = None
        self.target: dict[str, Any] = {
            "command": profile.command,
            "profile": profile.source,
            "generation": {"examples": generation.examples, "seed": generation.seed},
        }
        self.results: dict[str, dict[str, Any]] = {}
        self.controls: dict[str, dict[str, Any]] = {}
        self.paths: list[Path] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        try:
            catalogue = load_catalogue()
            audit = AuditSession(self.profile, catalogue, self.generation)
            audit.start()
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        except TargetError as exc:
            pytest.exit(f"mcp-confirm-audit: {exc}", returncode=pytest.ExitCode.INTERRUPTED)
        self.session = audit
        self.config.stash[SESSION_KEY] = audit
        parent = AuditCollector.from_parent(session, name="mcp-audit", nodeid="mcp-audit")
        ours: list[pytest.Item] = []
        for plan in audit.plans:
            for control in ("approve", "decline", "cancel", "negative"):
                name = f"control-{control}[{plan.name}]"
                ours.append(ControlItem.from_parent(parent, name=name, tool=plan.name, control=control))
            for spec in catalogue.active:
                name = f"{spec.id}-{spec.slug}[{plan.name}]"
                ours.append(AttackItem.from_parent(parent, name=name, spec=spec, tool=plan.name))
        items[:0] = ours
        # Report them as collected, so counts and -k deselection add up.
        report = pytest.CollectReport(parent.nodeid, "passed", None, ours)
        session.ihook.pytest_collectreport(report=report)

    def pytest_report_header(self) -> str:
        return f"mcp-confirm-audit: {self.generation.describe()}"

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["mcp_seed"] = self.generation.seed

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Runs on the controller for xdist workers' reports too: results
        # travel in user_properties, so reports are written once, in one place.
        for key, value in report.user_properties:
            if key == RESULT_PROPERTY:
                data = json.loads(value)
                self.results[f"{data['id']}[{data['tool']}]"] = data
            elif key == CONTROL_PROPERTY:
                data = json.loads(value)
                self.controls[f"{data['name']}[{data['tool']}]"] = data

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.session is not None:
            self.target["server"] = self.session.server_info
            self.target["tools"] = [p.name for p in self.session.plans]
            self.target["processes_started"] = self.session.stats.processes_started
            self.session.close()
        report_dir = _setting(self.config, "mcp_report_dir")
        if report_dir and not hasattr(self.config, "workerinput"):
            self.paths = write_reports(Path(report_dir), self._results(), self._controls(), self.target)

    def _results(self) -> list[Result]:
        return [Result.from_dict(d) for d in self.results.values()]

    def _controls(self) -> list[ControlResult]:
        return [ControlResult(**d) for d in self.controls.values()]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.results and not self.controls:
            return
        terminalreporter.write_sep("=", "mcp-confirm-audit: which layer refused each attack")
        for line in summary(self._results(), self._controls(), self.paths):
            terminalreporter.write_line(line)
        terminalreporter.write_line(self.generation.describe())
