"""Attacks and controls as real pytest items.

An item's id is the attack's stable id, so `-k`, `-m`, `--lf`, xdist and
`--junitxml` work without anything of our own. The attack runs in setup:
an attack that cannot be judged then shows as ERROR, never as a pass.
"""

from __future__ import annotations

import json
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ..engine.baseline import DRIFT, STALE, Baseline
from ..engine.controls import ControlOutcome
from ..engine.gate import CONTROL_ITEMS, ERROR, EXCUSED, FAILED, SKIPPED, WARNED, attack_gate, control_gate
from ..engine.session import AuditSession
from ..engine.verdict import describe
from ..models import ControlResult, Effect, Exchange, Result, Verdict
from ..profile.headers import scrub_all
from ..report.document import refused_by, shorten
from .markers import family_marker

# Evidence lines an ERROR or FAILED item shows in the terminal; the report
# files carry them all.
_SHOWN_EVIDENCE = 8
_PACKAGE = str(Path(__file__).resolve().parent.parent)

SESSION_KEY = pytest.StashKey["AuditSession"]()
STRICT_KEY = pytest.StashKey[bool]()
BASELINE_KEY = pytest.StashKey[Baseline]()
RESULT_PROPERTY = "mcp_audit_result"
CONTROL_PROPERTY = "mcp_audit_control"


class AttackFound(AssertionError):
    """The attack worked (or, under --mcp-strict, was refused too weakly)."""


class StaleBaseline(AttackFound):
    """The baseline accepts a finding this run no longer finds: the baseline must be updated."""


class Inconclusive(Exception):
    """The attack could not be judged; shown as ERROR."""


class AuditWarning(pytest.PytestWarning):
    """A weak refusal: a SHOULD-level failure."""


class LayerDrift(AuditWarning):
    """Refused, but by another layer than the baseline expects."""


class AuditCollector(pytest.Collector):
    def collect(self) -> list[pytest.Item]:
        return []


class ControlItem(pytest.Item):
    def __init__(self, *, tool: str, control: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool, self.control = tool, control
        self.outcome: ControlOutcome | None = None
        self.add_marker("mcp_audit")
        self.add_marker("mcp_control")

    def _result(self) -> ControlResult | None:
        assert self.outcome is not None
        return next((r for r in self.outcome.results if r.name == self.control), None)

    def setup(self) -> None:
        session = self.config.stash[SESSION_KEY]
        outcome = session.controls(self.tool)
        # No credential leaves the item (its text, junitxml's properties, the reports).
        secrets = session.profile.secrets()
        self.outcome = replace(
            outcome,
            results=scrub_all(outcome.results, secrets),
            evidence=scrub_all(outcome.evidence, secrets),
        )
        result = self._result()
        if result is not None and self.control == "approve":
            # What the terminal shortens ("whole in audit.json") goes there whole, once per tool.
            result = replace(result, evidence=self.outcome.evidence)
        if result is not None:
            self.user_properties.append((CONTROL_PROPERTY, json.dumps(result.as_dict())))
        if self.control == "approve":
            # What no item of its own stands for (the bookkeeping the controls learned)
            # reaches the reports with the approve control.
            for other in self.outcome.results:
                if other.name not in CONTROL_ITEMS:
                    self.user_properties.append((CONTROL_PROPERTY, json.dumps(other.as_dict())))
        gate = control_gate(result, self.control)
        if gate.outcome == ERROR:
            raise Inconclusive(f"the honest flow failed on {self.tool}: {gate.said}")

    def runtest(self) -> None:
        result = self._result()
        if result is None and self.control == "preview-alone" and self._approved():
            pytest.skip("an MRTR flow has no preview: its decline, cancel and negative answer were checked")
        gate = control_gate(result, self.control, self.config.stash.get(BASELINE_KEY, None))
        if gate.mark is not None and gate.mark.status == STALE:
            raise StaleBaseline(gate.said)
        if gate.outcome == EXCUSED:
            pytest.xfail(gate.said)
        if gate.outcome == SKIPPED:
            pytest.skip(gate.said)
        if gate.outcome == FAILED:
            raise AttackFound(gate.said)

    def _approved(self) -> bool:
        assert self.outcome is not None
        return self.outcome.approve_ok

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if not isinstance(excinfo.value, AttackFound | Inconclusive):
            return harness_error(self, excinfo)
        lines = [str(excinfo.value)]
        if self.outcome is not None:
            lines.extend(f"  {shorten(line)}" for line in _last(self.outcome.evidence))
        return "\n".join(lines)

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "mcp-audit", 0, f"control {self.control} [{self.tool}]"


class AttackItem(pytest.Item):
    def __init__(self, *, spec: Any, tool: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec, self.tool = spec, tool
        self.result: Result | None = None
        self.transcript_lines: tuple[str, ...] = ()
        self.add_marker("mcp_audit")
        self.add_marker(family_marker(spec.family))
        self.extra_keyword_matches.update({spec.family, spec.slug, spec.id})

    def setup(self) -> None:
        session: AuditSession = self.config.stash[SESSION_KEY]
        exchanges: tuple[Exchange, ...] = ()
        if (excluded := session.profile.exclude.get(self.spec.id)) is not None:
            result = _excluded(self.spec, self.tool, excluded, session.profile.source)
        else:
            result, transcript = session.run(self.spec, self.tool)
            exchanges = transcript.exchanges
        # What the reports say about a finding comes from the catalogue entry.
        result = replace(
            result,
            remedy=self.spec.remedy,
            owasp=self.spec.owasp,
            derived=self.spec.derived,
            requirements=self.spec.requirements,
        )
        # No credential leaves the item (its text, junitxml's properties, the reports).
        secrets = session.profile.secrets()
        self.result = result = scrub_all(result, secrets)
        self.transcript_lines = scrub_all(tuple(describe(e) for e in exchanges), secrets)
        for key in ("id", "family", "variant", "verdict", "layer"):
            value = getattr(result, key)
            self.user_properties.append((f"mcp.{key}", getattr(value, "value", value) or ""))
        self.user_properties.append((RESULT_PROPERTY, json.dumps(result.as_dict())))
        if attack_gate(result, None).outcome == ERROR:
            raise Inconclusive(result.reason)

    def runtest(self) -> None:
        # What the item does is decided in engine/gate.py: the exit status as a pure function.
        assert self.result is not None
        strict = self.config.stash.get(STRICT_KEY, False)
        baseline = self.config.stash.get(BASELINE_KEY, None)
        gate = attack_gate(self.result, baseline, strict=strict)
        mark = gate.mark
        if mark is not None:
            self.user_properties.append(("mcp.baseline", mark.status))
        if mark is not None and mark.status == STALE:
            raise StaleBaseline(gate.said)
        if gate.outcome == EXCUSED:
            pytest.xfail(gate.said)
        if mark is not None and mark.status == DRIFT and gate.outcome == WARNED:
            self.warn(LayerDrift(f"{self.spec.id} layer drift on {self.tool}: {mark.reason}"))
        if gate.outcome == SKIPPED:
            pytest.skip(gate.said)
        if gate.outcome == FAILED:
            raise AttackFound(gate.said)
        if self.result.verdict is Verdict.WEAK:
            self.warn(AuditWarning(gate.said))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        # A weak result's warning becomes an exception under -W error: show it like a finding.
        if not isinstance(excinfo.value, AttackFound | Inconclusive | AuditWarning) or self.result is None:
            return harness_error(self, excinfo)
        result = self.result
        if isinstance(excinfo.value, Inconclusive) and result.reason.startswith("honest flow failed"):
            # Said once per tool by its approve control; here, one line.
            return shorten(f"{result.id} on {result.tool}: inconclusive, {result.reason}")
        head = [
            f"{result.id} {result.title}",
            f"  tool: {result.tool}   verdict: {result.verdict.value}   refused by: {refused_by(result)}",
            f"  {excinfo.value}",
        ]
        if result.remedy and result.verdict in (Verdict.VULNERABLE, Verdict.WEAK):
            head.append(f"  remedy: {shorten(result.remedy)}")
        evidence = _last(result.evidence)
        left_out = len(result.evidence) - len(evidence)
        head.append(
            "  evidence"
            + (f" (the last {len(evidence)} of {len(result.evidence)} lines):" if left_out else ":")
        )
        return "\n".join([*head, *(f"    {shorten(line)}" for line in evidence)])

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "mcp-audit", 0, f"{self.spec.id} {self.spec.title} [{self.tool}]"


def _excluded(spec: Any, tool: str, reason: str, source: str) -> Result:
    """The result of an attack the profile leaves out: not run, and the person's reason for it."""
    return Result(
        id=spec.id,
        family=spec.family,
        title=spec.title,
        tool=tool,
        variant=spec.variant,
        severity=spec.severity,
        level=spec.level,
        verdict=Verdict.EXCLUDED,
        layer=None,
        asked_user=False,
        effect=Effect(),
        reason=f"excluded by the profile ({source}): {reason}",
        evidence=(),
        refs=tuple(spec.refs),
    )


def _last(lines: tuple[str, ...]) -> tuple[str, ...]:
    return lines[-_SHOWN_EVIDENCE:]


def harness_error(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """A fault of the harness (or of pytest's machinery) in a few lines, not pages of framework source.

    `--full-trace` shows the whole traceback.
    """
    if item.config.getoption("fulltrace", False):
        return str(excinfo.getrepr(style="long"))
    frames = traceback.extract_tb(excinfo.tb)
    ours = [f for f in frames if f.filename.startswith(_PACKAGE)] or frames[-1:]
    lines = [f"harness error: {excinfo.typename}: {shorten(str(excinfo.value))}"]
    lines.extend(f"  at {Path(f.filename).name}:{f.lineno} in {f.name}" for f in ours[-2:])
    lines.append("  (--full-trace shows the whole traceback)")
    return "\n".join(lines)
