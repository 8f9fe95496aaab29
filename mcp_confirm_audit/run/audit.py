"""The audit run inside pytest: registered only when a target is given.

It starts the target, turns every (tool, control) and (tool, attack) into a
pytest item, collects what the items send back (on the controller under
xdist), and writes the reports and the terminal summary once.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Generator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ..catalogue.generation import Generation, generation_for
from ..catalogue.loader import load_catalogue
from ..engine.baseline import Baseline, load_baseline
from ..engine.gate import CONTROL_ITEMS
from ..engine.session import AuditSession
from ..errors import TargetError, UsageError
from ..models import ControlResult, Result
from ..profile.headers import scrub_all
from ..profile.loader import Profile, load_profile, profile_from_mapping, resolve_profile
from ..report import AuditReport, build_report, summary, write_reports
from ..report.depth import depth_summary
from ..target import confine
from .collect import (
    BASELINE_KEY,
    CONTROL_PROPERTY,
    RESULT_PROPERTY,
    SESSION_KEY,
    STRICT_KEY,
    AttackItem,
    AuditCollector,
    ControlItem,
)


def _setting(config: pytest.Config, name: str) -> Any:
    value = config.getoption(name)
    return value if value is not None else config.getini(name)


def configure(config: pytest.Config) -> None:
    """Load the profile, baseline and seed, and register the run: a target was given."""
    target, profile_path = _setting(config, "mcp_target"), _setting(config, "mcp_profile")
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
        if _setting(config, "mcp_no_confinement"):
            profile = replace(profile, confinement="off")
        elif _setting(config, "mcp_require_confinement"):
            profile = replace(profile, confinement="required")
        # xdist workers take the controller's seed, so every worker draws the same names.
        seed = _setting(config, "mcp_seed")
        if seed is None:
            seed = getattr(config, "workerinput", {}).get("mcp_seed")
        if seed is None:
            seed = profile.seed
        generation = generation_for(_setting(config, "mcp_examples"), seed, os.environ)
        if baseline_path := _baseline_path(config):
            config.stash[BASELINE_KEY] = load_baseline(baseline_path, load_catalogue())
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[STRICT_KEY] = bool(_setting(config, "mcp_strict"))
    run = _Audit(config, profile, profile_path, generation)
    config.pluginmanager.register(run, "mcp-confirm-audit-run")
    config.pluginmanager.register(_END, "mcp-confirm-audit-orderly-end")
    _stop_cleanly_on_sigterm()
    if not hasattr(config, "workerinput") and not any(
        getattr(config.option, name, False)
        for name in ("help", "markers", "showfixtures", "show_fixtures_per_test")
    ):
        # Start the target now, before pytest prints its session header: one
        # that will not start is then one line on stderr, and exit code 2.
        run.session = run._start()


def _stop_cleanly_on_sigterm() -> None:
    """A run stopped by SIGTERM (`timeout`, a CI runner cancelling) ends as Ctrl-C does.

    By default SIGTERM ends the process at once: no report is written, and the
    target's processes and sandboxes outlive it. As a KeyboardInterrupt, pytest
    finishes the session (the reports of what was judged, the processes stopped,
    the sandboxes removed) and exits with its "interrupted" code. A handler an
    embedding program installed is left alone (not the CLI's, which stands in until now).
    """
    if threading.current_thread() is not threading.main_thread():
        return
    current = signal.getsignal(signal.SIGTERM)
    if current is not signal.SIG_DFL and not getattr(current, "stands_in_for_the_plugin", False):
        return

    def interrupt(signum: int, frame: object) -> None:
        # Should the orderly end hang (a call still running in the event loop), the
        # processes and sandboxes go anyway, and the run ends with pytest's code.
        threading.Thread(target=_last_resort, name="mcp-audit-sigterm", daemon=True).start()
        if _END.finishing:
            # The orderly end is under way (pytest's hooks cannot take a KeyboardInterrupt
            # raised inside them): it goes on, and the run ends as one stopped.
            _END.stopped = True
            return
        raise KeyboardInterrupt(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


class _OrderlyEnd:
    """Whether pytest is finishing the session, when a SIGTERM came during that, and its exit code then."""

    def __init__(self) -> None:
        self.finishing = False
        self.stopped = False

    def pytest_sessionstart(self) -> None:
        self.finishing = self.stopped = False

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        # The outermost of the session's last hooks: the reports, the targets stopped, the summary.
        self.finishing = True
        try:
            yield
        finally:
            if self.stopped:
                session.exitstatus = pytest.ExitCode.INTERRUPTED


_END = _OrderlyEnd()


# Seconds the orderly end of a stopped run may take before the last resort.
_ORDERLY_END = 15.0


def _last_resort() -> None:
    time.sleep(_ORDERLY_END)
    from ..oracle.sandbox import remove_every_sandbox
    from ..target.reaper import kill_every_target

    kill_every_target()
    remove_every_sandbox()
    os._exit(int(pytest.ExitCode.INTERRUPTED))


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
    from ..profile import headers as http_headers

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
        # What was collected and selected (-k, -m, --lf), and why a run stopped early.
        self.scope: dict[str, Any] = {}
        self.collected_attacks = 0
        # Progress: the items of each (tool, family) group not yet finished.
        self.pending: dict[tuple[str, str], set[str]] = {}
        self.group_of: dict[str, tuple[str, str]] = {}

    def _start(self) -> AuditSession:
        """Start the target and discover its tools, or stop the run with one line saying why."""
        try:
            from .hookspecs import snapshot_probe

            hooked = snapshot_probe(self.config)
            audit = AuditSession(
                self.profile, load_catalogue(), self.generation, probes=() if hooked is None else (hooked,)
            )
            if unknown := sorted(set(self.profile.exclude) - {a.id for a in audit.catalogue.attacks}):
                raise UsageError(
                    f"profile {self.profile.source}: exclude names {unknown[0]}, which is not in the "
                    "catalogue; list the ids with 'mcp-confirm-audit catalogue'"
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
            probe = self.session or self._start()
            self.session = None
            self._learn(probe)
            probe.close()

    def _learn(self, audit: AuditSession) -> None:
        self.target["server"] = audit.server_info
        self.target["tools"] = [p.name for p in audit.plans]
        if audit.left_out:
            self.target["left_out"] = list(audit.left_out)
        self.target["confinement"] = audit.regime.line()
        # Counted here, once per audit session (outside writes are learned again after it closes).
        started = self.target.get("processes_started", 0)
        self.target["processes_started"] = started + audit.stats.processes_started
        self._learn_outside(audit)

    def _learn_outside(self, audit: AuditSession) -> None:
        """What the confined target wrote outside its root: known once its sandboxes are removed."""
        if audit.outside_writes:
            known = {entry["path"] for entry in self.target.get("outside_root", [])}
            self.target["outside_root"] = [
                *self.target.get("outside_root", []),
                *(entry for entry in audit.outside_writes if entry["path"] not in known),
            ]

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        try:
            audit = self.session or self._start()
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
            for control in CONTROL_ITEMS:
                name = f"control-{control}[{plan.name}]"
                ours.append(
                    ControlItem.from_parent(
                        parent, name=name, nodeid=_nodeid(parent, name), tool=plan.name, control=control
                    )
                )
            for spec in catalogue.active:
                name = f"{spec.id}-{spec.slug}[{plan.name}]"
                ours.append(
                    AttackItem.from_parent(
                        parent, name=name, nodeid=_nodeid(parent, name), spec=spec, tool=plan.name
                    )
                )
        items[:0] = ours
        self.collected_attacks = sum(isinstance(item, AttackItem) for item in ours)
        # Report them as collected, so counts and -k deselection add up.
        report = pytest.CollectReport(
            parent.nodeid, "passed", None, list[pytest.Item | pytest.Collector](ours)
        )
        session.ihook.pytest_collectreport(report=report)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # After -k and -m have deselected: start a second process in the
        # background only if an attack that will run needs one. Not in an
        # xdist worker: it holds every item, whichever worker will run them.
        # Not for --collect-only either: no attack will run.
        runs = not self.config.option.collectonly
        if self.session is not None and runs and not hasattr(self.config, "workerinput"):
            self.session.prepare(
                item.spec
                for item in session.items
                if isinstance(item, AttackItem) and item.spec.id not in self.session.profile.exclude
            )
        attacks = [item for item in session.items if isinstance(item, AttackItem)]
        if self.session is not None and not hasattr(self.config, "workerinput"):
            # An attack the profile excludes is not run: no world is started for it.
            excluded = self.session.profile.exclude
            self.session.expect(sum(item.spec.id not in excluded for item in attacks))
        self.scope = {
            "attacks": self.collected_attacks,
            "selected": len(attacks),
            "selected_by": _selection(self.config) if len(attacks) < self.collected_attacks else None,
            "stopped_early": None,
        }
        for item in session.items:
            if isinstance(item, AttackItem | ControlItem):
                group = (item.tool, item.spec.family if isinstance(item, AttackItem) else "controls")
                self.pending.setdefault(group, set()).add(item.nodeid)
                self.group_of[item.nodeid] = group

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> pytest.TestReport | None:
        """A failure in an attack's or a control's setup, reported with the item's own few lines.

        pytest shows a failure in setup with its traceback, not the item's
        repr_failure: an inconclusive attack or a harness error would be pages
        of framework source, and formatting them (reading and parsing every
        frame's source) costs more than the attack. So the report is made
        here, and pytest's is never built; skips and xfails go pytest's way.
        """
        excinfo = call.excinfo
        if (
            not isinstance(item, AttackItem | ControlItem)
            or call.when != "setup"
            or excinfo is None
            or excinfo.errisinstance((pytest.skip.Exception, pytest.xfail.Exception))
            or isinstance(excinfo.value, BaseExceptionGroup)
        ):
            return None
        sections = [(f"Captured {key} {when}", content) for when, key, content in item._report_sections]
        return pytest.TestReport(
            item.nodeid,
            item.location,
            dict.fromkeys(item.keywords, 1),
            "failed",
            item.repr_failure(excinfo),
            "setup",
            sections,
            call.duration,
            call.start,
            call.stop,
            user_properties=item.user_properties,
        )

    def pytest_report_header(self) -> list[str]:
        lines = [f"mcp-confirm-audit: {self.generation.describe()}"]
        try:
            lines.append(f"mcp-confirm-audit: confinement: {confine.regime(self.profile).line()}")
        except TargetError as exc:  # required and impossible: the start stops the run with this line
            lines.append(f"mcp-confirm-audit: confinement: none: {exc}")
        if self.profile.headers:
            lines.append(f"mcp-confirm-audit: headers {'; '.join(h.redacted for h in self.profile.headers)}")
        for name, own in self.profile.principals.items():
            lines.append(f"mcp-confirm-audit: principal {name}: {'; '.join(h.redacted for h in own)}")
        return lines

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["mcp_seed"] = self.generation.seed

    def pytest_report_teststatus(
        self, report: pytest.TestReport | pytest.CollectReport
    ) -> tuple[str, str, str] | None:
        """An attack left unjudged because its tool's honest flow failed counts as `inconclusive`.

        It still fails the run (exit 1), but is not one more error section repeating the reason
        its approve control already gives once: a target that hangs in the honest flow would
        otherwise print three lines for every attack in the catalogue.
        """
        # A collection report comes here too (a project's test module that fails to
        # import, beside the audit): it has no user_properties, and is pytest's to show.
        if isinstance(report, pytest.TestReport) and report.failed and _unjudged(report):
            return "inconclusive", "I", "INCONCLUSIVE"
        return None

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
        if report.when == "teardown" and (group := self.group_of.get(report.nodeid)) is not None:
            waiting = self.pending[group]
            waiting.discard(report.nodeid)
            if not waiting:
                self._progress(group)

    def _progress(self, group: tuple[str, str]) -> None:
        """One line as each family (and each tool's controls) finishes: long runs are not just dots."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or self.config.get_verbosity() < 0:
            return
        tool, family = group
        if family == "controls":
            done = [c for c in self.controls.values() if c["tool"] == tool]
            said = ", ".join(
                f"{c['name']} " + ("n/a" if not c["applicable"] else ("ok" if c["passed"] else "FAILED"))
                for c in done
            )
        else:
            done = [r for r in self.results.values() if r["tool"] == tool and r["family"] == family]
            if all(r["reason"].startswith("honest flow failed") for r in done):
                return  # the tool's approve control already said why, once
            counts: dict[str, int] = {}
            for r in done:
                counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
            said = f"{len(done)} attack(s): " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
        reporter.ensure_newline()
        reporter.write_line(f"mcp-confirm-audit: {family} on {tool}: {said}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.session is not None:
            self._learn(self.session)
            self.session.close()
            self._learn_outside(self.session)
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:
            # An xdist worker: hand what it learned about the target to the
            # controller, which alone writes the reports.
            workeroutput["mcp_audit_target"] = json.dumps(self.target)
            workeroutput["mcp_audit_scope"] = json.dumps(self.scope)
            return
        if not self.results and not self.controls:
            return
        if self.scope and len(self.results) < self.scope["selected"]:
            missing = self.scope["selected"] - len(self.results)
            self.scope["stopped_early"] = _stopped_by(self.config, session, missing)
        # Every credential the profile holds is scrubbed from what is reported, the
        # target's command line included (a server that takes its token as `--token T`).
        self.report = scrub_all(
            build_report(
                self._results(), self._controls(), self.target, baseline=self.baseline, scope=self.scope
            ),
            self.profile.secrets(),
        )
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
        if "mcp_audit_scope" in output and not self.scope:
            self.scope = json.loads(output["mcp_audit_scope"])
        worker = json.loads(output["mcp_audit_target"])
        started = self.target.get("processes_started", 0) + worker.pop("processes_started", 0)
        self.target.update({k: v for k, v in worker.items() if v})
        self.target["processes_started"] = started

    def _results(self) -> list[Result]:
        return [Result.from_dict(d) for d in self.results.values()]

    def _controls(self) -> list[ControlResult]:
        return [
            ControlResult(**{**d, "evidence": tuple(d.get("evidence", ()))}) for d in self.controls.values()
        ]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        terminalreporter.write_sep(
            "=", "mcp-confirm-audit: what was judged, and which layer refused each attack"
        )
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


def _unjudged(report: pytest.TestReport) -> bool:
    for key, value in report.user_properties:
        if key == RESULT_PROPERTY:
            data = json.loads(str(value))
            return bool(data["verdict"] == "inconclusive" and data["reason"].startswith("honest flow failed"))
    return False


def _selection(config: pytest.Config) -> str:
    """What narrowed the run, as the user typed it."""
    said = []
    if keyword := config.getoption("keyword", ""):
        said.append(f"-k {keyword}")
    if markexpr := config.getoption("markexpr", ""):
        said.append(f"-m {markexpr}")
    if config.getoption("lf", False):
        said.append("--lf")
    if config.getoption("deselect", None):
        said.append("--deselect")
    return " ".join(said) or "a selection"


def _stopped_by(config: pytest.Config, session: pytest.Session, missing: int) -> str:
    maxfail = config.getoption("maxfail", 0)
    if maxfail == 1:
        return "-x"
    if maxfail:
        return f"--maxfail {maxfail}"
    if said := session.shouldstop or session.shouldfail:
        return str(said)
    if session.exitstatus == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    # Nothing stopped the run: the attacks without a result ended in a harness error (shown as ERROR).
    return f"{missing} attack(s) ended in a harness error"


def _nodeid(parent: pytest.Collector, name: str) -> str:
    # Spelled out: an id built from the parent's would keep "[tool]" in the
    # name, where the one --lf reads back from the cache has it as params, so
    # the two never match and --lf would silently run everything again.
    return f"{parent.nodeid}::{name}"
