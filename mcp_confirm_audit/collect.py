"""Attacks and controls as real pytest items.

An item's id is the attack's stable id, so `-k`, `-m`, `--lf`, xdist and
`--junitxml` work without anything of our own. The attack runs in setup:
an attack that cannot be judged then shows as ERROR, never as a pass.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .baseline import ACCEPTED, DRIFT, STALE, Baseline
from .controls import ControlOutcome
from .models import ControlResult, Result, Verdict
from .session import AuditSession
from .verdict import describe

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


def family_marker(family: str) -> str:
    return "mcp_" + family.replace("-", "_")


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
        self.outcome = session.controls(self.tool)
        result = self._result()
        if result is not None:
            self.user_properties.append((CONTROL_PROPERTY, json.dumps(result.as_dict())))
        if self.control == "approve" and (result is None or not result.passed):
            raise Inconclusive(
                f"the honest flow failed on {self.tool}: {result.detail if result else 'not run'}"
            )

    def runtest(self) -> None:
        result = self._result()
        if result is None:
            pytest.skip("not run: the approve control failed")
        if not result.applicable:
            pytest.skip(result.detail)
        if not result.passed:
            raise AttackFound(f"control {self.control} on {self.tool}: {result.detail}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        lines = [str(excinfo.value)]
        if self.outcome is not None:
            lines.extend(f"  {line}" for line in self.outcome.evidence)
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
        result, transcript = session.run(self.spec, self.tool)
        self.result = result
        self.transcript_lines = tuple(describe(e) for e in transcript.exchanges)
        for key in ("id", "family", "variant", "verdict", "layer"):
            value = getattr(result, key)
            self.user_properties.append((f"mcp.{key}", getattr(value, "value", value) or ""))
        self.user_properties.append((RESULT_PROPERTY, json.dumps(result.as_dict())))
        if result.verdict is Verdict.INCONCLUSIVE:
            raise Inconclusive(result.reason)

    def runtest(self) -> None:
        assert self.result is not None
        verdict = self.result.verdict
        strict = self.config.stash.get(STRICT_KEY, False)
        baseline = self.config.stash.get(BASELINE_KEY, None)
        mark = baseline.mark(self.result) if baseline is not None else None
        if baseline is not None and mark is not None:
            self.user_properties.append(("mcp.baseline", mark.status))
            if mark.status == STALE:
                raise StaleBaseline(f"STALE baseline entry in {baseline.source}: {mark.reason}; remove it")
            if mark.status == ACCEPTED:
                pytest.xfail(f"baselined in {baseline.source}: {mark.reason}")
            if mark.status == DRIFT:
                if strict:
                    raise AttackFound(f"LAYER DRIFT (--mcp-strict): {mark.reason}, as {baseline.source} says")
                self.warn(LayerDrift(f"{self.spec.id} layer drift on {self.tool}: {mark.reason}"))
        if verdict is Verdict.NOT_APPLICABLE:
            pytest.skip(self.result.reason)
        if verdict is Verdict.VULNERABLE:
            raise AttackFound(f"VULNERABLE: {self.result.reason}")
        if verdict is Verdict.WEAK:
            if strict:
                raise AttackFound(f"WEAK (--mcp-strict): {self.result.reason}")
            self.warn(AuditWarning(f"{self.spec.id} weak on {self.tool}: {self.result.reason}"))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        # A weak result's warning becomes an exception under -W error: show it like a finding.
        if not isinstance(excinfo.value, AttackFound | Inconclusive | AuditWarning) or self.result is None:
            return str(super().repr_failure(excinfo))
        result = self.result
        head = [
            f"{result.id} {result.title}",
            f"  tool: {result.tool}   verdict: {result.verdict.value}   refused by: {_refuser(result)}"
            f"   asked user: {'yes' if result.asked_user else 'no'}",
            f"  {excinfo.value}",
            "  evidence:",
        ]
        return "\n".join([*head, *(f"    {line}" for line in result.evidence)])

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "mcp-audit", 0, f"{self.spec.id} {self.spec.title} [{self.tool}]"


def _refuser(result: Result) -> str:
    if result.verdict is Verdict.VULNERABLE:
        return "nothing"
    return result.layer.value if result.layer else "-"
