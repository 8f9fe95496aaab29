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

from . import headers as http_headers
from .baseline import Baseline, load_baseline
from .catalogue import family_names, load_catalogue
from .collect import (
    BASELINE_KEY,
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
from .profile import ROOT_FROM, Profile, load_profile, profile_from_mapping, resolve_profile
from .report import AuditReport, build_report, summary, write_reports
from .report.depth import depth_summary
from .session import AuditSession

_OPTIONS: list[tuple[str, dict[str, Any], str]] = [
    (
        "--mcp-target",
        {"metavar": "CMD"},
        "the MCP server under test: a command with {root}, a URL, or py:module:factory",
    ),
    ("--mcp-profile", {"metavar": "FILE"}, "a target profile (YAML); --mcp-target overrides its command"),
    (
        "--mcp-root-from",
        {"choices": ROOT_FROM},
        "how the target learns its root: 'arg' ({root} in the command) or 'cwd'",
    ),
    ("--mcp-report-dir", {"metavar": "DIR"}, "write audit.json (and the other reports) into DIR"),
    ("--mcp-call-timeout", {"metavar": "SECONDS", "type": float}, "seconds to wait for any one round trip"),
    ("--mcp-start-timeout", {"metavar": "SECONDS", "type": float}, "seconds for the target to start"),
    (
        "--mcp-examples",
        {"metavar": "N", "type": int},
        f"hostile names generated per prompt-forging attack (default {DEFAULT_EXAMPLES})",
    ),
    (
        "--mcp-seed",
        {"metavar": "S", "type": int},
        "seed for generated names; each run prints its own (CI=true fixes it), pass it to repeat a run",
    ),
    (
        "--mcp-baseline",
        {"metavar": "FILE"},
        "accepted findings and expected layers (YAML or JSON); stale entries fail",
    ),
    ("--mcp-root", {"metavar": "DIR"}, "the directory a running (URL) target serves, made for the audit"),
    ("--mcp-replicas", {"metavar": "N"}, "start N processes of the target on one root (cross-replica)"),
    ("--mcp-redemptions", {"metavar": "N"}, "redemptions of one approval sent at once (double-spend; 8)"),
]


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-confirm-audit", "MCP confirmation security audit")
    for flag, extra, help_text in _OPTIONS:
        dest = flag.lstrip("-").replace("-", "_")
        group.addoption(flag, dest=dest, default=None, help=help_text, **extra)
        parser.addini(dest, help=f"{help_text} (ini twin of {flag})", default=None)
    group.addoption(
        "--mcp-strict",
        dest="mcp_strict",
        action="store_true",
        default=None,
        help="fail on weak results (SHOULD-level failures), not only on vulnerable ones",
    )
    parser.addini("mcp_strict", help="ini twin of --mcp-strict", type="bool", default=False)
    group.addoption(
        "--mcp-no-ablation",
        dest="mcp_no_ablation",
        action="store_true",
        default=None,
        help="in-process targets: do not run attacks the SDK boundary refused again without it",
    )
    parser.addini("mcp_no_ablation", help="ini twin of --mcp-no-ablation", type="bool", default=False)
    group.addoption(
        "--mcp-header",
        dest="mcp_header",
        action="append",
        default=None,
        metavar="'NAME: VALUE'",
        help="an HTTP header sent on every request (repeatable; ${NAME} is read from the environment; "
        "never shown in any report)",
    )
    parser.addini(
        "mcp_header", help="ini twin of --mcp-header, one header a line", type="linelist", default=[]
    )


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
        profile = load_profile(Path(profile_path)) if profile_path else Profile()
        profile = _with_headers(config, profile)
        profile = resolve_profile(_topology(config, profile), target, _setting(config, "mcp_root_from"))
        if (timeout := _setting(config, "mcp_call_timeout")) is not None:
            profile = replace(profile, call_timeout=_seconds("--mcp-call-timeout", timeout))
        if (timeout := _setting(config, "mcp_start_timeout")) is not None:
            profile = replace(profile, start_timeout=_seconds("--mcp-start-timeout", timeout))
        if _setting(config, "mcp_no_ablation"):
            profile = replace(profile, ablation=False)
        # xdist workers take the controller's seed, so every worker draws the same names.
        seed = _setting(config, "mcp_seed")
        if seed is None:
            seed = getattr(config, "workerinput", {}).get("mcp_seed")
        generation = generation_for(_setting(config, "mcp_examples"), seed, os.environ)
        if baseline_path := _baseline_path(config):
            config.stash[BASELINE_KEY] = load_baseline(baseline_path, load_catalogue())
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[STRICT_KEY] = bool(_setting(config, "mcp_strict"))
    config.pluginmanager.register(_Audit(config, profile, profile_path, generation), "mcp-confirm-audit-run")


def _baseline_path(config: pytest.Config) -> Path | None:
    if option := config.getoption("mcp_baseline"):
        return Path(option)
    if ini := config.getini("mcp_baseline"):
        # An ini setting is relative to the ini file, wherever pytest is run from.
        return (config.inipath.parent if config.inipath else config.rootpath) / str(ini)
    return None


def _seconds(flag: str, value: Any) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise UsageError(f"{flag} must be a positive number of seconds, got {value!r}")
    return seconds


def _with_headers(config: pytest.Config, profile: Profile) -> Profile:
    """--mcp-header (or its ini twin) over the profile's headers, a name given twice replaced."""
    given = config.getoption("mcp_header") or config.getini("mcp_header") or []
    extra = [http_headers.parse(text, source="--mcp-header", environ=os.environ) for text in given]
    return replace(profile, headers=http_headers.overlay(profile.headers, extra)) if extra else profile


def _topology(config: pytest.Config, profile: Profile) -> Profile:
    """--mcp-root, --mcp-replicas and --mcp-redemptions over the profile, checked like profile keys."""
    raw = {"root": _setting(config, "mcp_root")}
    for key in ("replicas", "redemptions"):
        value = _setting(config, f"mcp_{key}")
        if value is not None:
            try:
                raw[key] = int(value)
            except ValueError:
                raise UsageError(f"--mcp-{key} must be a whole number, got {value!r}") from None
    for key, value in raw.items():
        if value is not None:
            checked = profile_from_mapping({key: value}, source=f"--mcp-{key}")
            profile = replace(profile, **{key: getattr(checked, key)})
    return profile


class _Audit:
    """Registered only when a target is given: collects, runs, and reports."""

    def __init__(
        self, config: pytest.Config, profile: Profile, profile_path: str | None, generation: Generation
    ) -> None:
        self.config = config
        self.profile = profile
        self.generation = generation
        self.session: AuditSession | None = None
        self.target: dict[str, Any] = {
            "command": profile.command,
            "command_source": profile.source,
            "profile": profile_path or None,
            "version": profile.version,
            "root_from": profile.root_from,
            "call_timeout": profile.call_timeout,
            "generation": {"examples": generation.examples, "seed": generation.seed},
            "transport": profile.transport,
            "replicas": profile.replicas,
            "shared_keys": bool(profile.shared_key_env),
            "ablation": profile.is_in_process and profile.ablation,
        }
        self.baseline: Baseline | None = config.stash.get(BASELINE_KEY, None)
        self.report: AuditReport | None = None
        self.results: dict[str, dict[str, Any]] = {}
        self.controls: dict[str, dict[str, Any]] = {}
        self.paths: list[Path] = []

    def _start(self) -> AuditSession:
        """Start the target and discover its tools, or stop the run with one line saying why."""
        try:
            from .hookspecs import snapshot_probe

            hooked = snapshot_probe(self.config)
            audit = AuditSession(
                self.profile, load_catalogue(), self.generation, probes=() if hooked is None else (hooked,)
            )
            audit.start()
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        except TargetError as exc:
            pytest.exit(f"mcp-confirm-audit: {exc}", returncode=pytest.ExitCode.INTERRUPTED)
        return audit

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        # The xdist controller collects nothing, and a worker that stops is
        # restarted again and again. So the controller checks, once, before
        # any worker starts, that the target starts and has a tool to audit.
        if self.config.pluginmanager.has_plugin("dsession"):
            probe = self._start()
            self._learn(probe)
            probe.close()

    def _learn(self, audit: AuditSession) -> None:
        self.target["server"] = audit.server_info
        self.target["tools"] = [p.name for p in audit.plans]
        started = self.target.get("processes_started", 0)
        self.target["processes_started"] = started + audit.stats.processes_started

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        try:
            audit = self._start()
        except (pytest.UsageError, pytest.exit.Exception) as exc:
            if not hasattr(self.config, "workerinput"):
                raise
            # The controller's probe passed, so this is a target that failed
            # only now: stop the whole run with the reason, not this worker alone.
            session.shouldstop = str(getattr(exc, "msg", exc))
            return
        catalogue = audit.catalogue
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
        report = pytest.CollectReport(
            parent.nodeid, "passed", None, list[pytest.Item | pytest.Collector](ours)
        )
        session.ihook.pytest_collectreport(report=report)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # After -k and -m have deselected: start a second process in the
        # background only if an attack that will run needs one. Not in an
        # xdist worker: it holds every item, whichever worker will run them.
        if self.session is not None and not hasattr(self.config, "workerinput"):
            self.session.prepare(item.spec for item in session.items if isinstance(item, AttackItem))

    def pytest_report_header(self) -> list[str]:
        lines = [f"mcp-confirm-audit: {self.generation.describe()}"]
        if self.profile.headers:
            lines.append(f"mcp-confirm-audit: headers {'; '.join(h.redacted for h in self.profile.headers)}")
        for name, own in self.profile.principals.items():
            lines.append(f"mcp-confirm-audit: principal {name}: {'; '.join(h.redacted for h in own)}")
        return lines

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["mcp_seed"] = self.generation.seed

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Runs on the controller for xdist workers' reports too: results
        # travel in user_properties, so reports are written once, in one place.
        for key, value in report.user_properties:
            if key == RESULT_PROPERTY:
                data = json.loads(str(value))
                self.results[f"{data['id']}[{data['tool']}]"] = data
            elif key == CONTROL_PROPERTY:
                data = json.loads(str(value))
                self.controls[f"{data['name']}[{data['tool']}]"] = data

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.session is not None:
            self._learn(self.session)
            self.session.close()
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            # An xdist worker: hand what it learned about the target to the
            # controller, which alone writes the reports.
            workeroutput["mcp_audit_target"] = json.dumps(self.target)
            return
        if not self.results and not self.controls:
            return
        self.report = build_report(self._results(), self._controls(), self.target, baseline=self.baseline)
        if self.report.unmatched and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if report_dir := _setting(self.config, "mcp_report_dir"):
            self.paths = write_reports(Path(report_dir), self.report)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        # xdist controller: every worker started its own target processes.
        output = getattr(node, "workeroutput", None) or {}
        if "mcp_audit_target" not in output:
            return
        worker = json.loads(output["mcp_audit_target"])
        started = self.target.get("processes_started", 0) + worker.pop("processes_started", 0)
        self.target.update({k: v for k, v in worker.items() if v})
        self.target["processes_started"] = started

    def _results(self) -> list[Result]:
        return [Result.from_dict(d) for d in self.results.values()]

    def _controls(self) -> list[ControlResult]:
        return [ControlResult(**d) for d in self.controls.values()]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        terminalreporter.write_sep("=", "mcp-confirm-audit: which layer refused each attack")
        for line in summary(self.report, self.paths):
            terminalreporter.write_line(line)
        for line in depth_summary(self.report.results):
            terminalreporter.write_line(line)
        if self.report.unmatched:
            terminalreporter.write_line(
                f"FAILED: {len(self.report.unmatched)} stale baseline entr(y/ies) matched no result; "
                f"remove them from {self.report.baseline}",
                red=True,
            )
        terminalreporter.write_line(self.generation.describe())
