"""What every writer renders: one run's results, controls, target and baseline marks.

Built once, on the controller, from what the items sent back. Paths inside
the run's temporary sandbox are written as `{sandbox}`: the sandbox is gone
when the report is read, and a review checked into a repository should not
change because a temporary directory had another random name.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from ..baseline import Baseline, Mark
from ..models import ControlResult, Result, Verdict

SANDBOX = "{sandbox}"
# The sandbox is `mkdtemp(prefix="mcp-audit-")`; evidence may cut its name
# short (long messages are abbreviated), so the random part is matched loosely.
_SANDBOX_PATH = re.compile(re.escape(os.path.realpath(tempfile.gettempdir())) + r"/mcp-audit-[A-Za-z0-9_]*")

FINDINGS = (Verdict.VULNERABLE, Verdict.WEAK)
SEVERITIES = ("critical", "high", "medium", "low", "info")


@dataclass(frozen=True)
class AuditReport:
    results: tuple[Result, ...]
    controls: tuple[ControlResult, ...]
    target: Mapping[str, Any]
    generated: datetime
    marks: Mapping[tuple[str, str], Mark] = field(default_factory=dict)
    baseline: str | None = None
    # Accepted findings no result could match (a retired attack, a tool gone).
    unmatched: tuple[str, ...] = ()

    def mark(self, result: Result) -> Mark | None:
        return self.marks.get((result.id, result.tool))

    @property
    def findings(self) -> tuple[Result, ...]:
        return tuple(r for r in self.results if r.verdict in FINDINGS)

    @property
    def failed_controls(self) -> tuple[ControlResult, ...]:
        """Refusal controls that acted: findings. A failed approve is not one: it leaves nothing judged."""
        return tuple(c for c in self.controls if c.name != "approve" and c.applicable and not c.passed)

    @property
    def failed_approvals(self) -> tuple[ControlResult, ...]:
        return tuple(c for c in self.controls if c.name == "approve" and not c.passed)


def build_report(
    results: Sequence[Result],
    controls: Sequence[ControlResult],
    target: Mapping[str, Any],
    *,
    generated: datetime | None = None,
    baseline: Baseline | None = None,
) -> AuditReport:
    ordered = tuple(sorted((_normalised(r) for r in results), key=lambda r: (r.tool, r.id)))
    marks = {}
    if baseline is not None:
        marks = {(r.id, r.tool): m for r in ordered if (m := baseline.mark(r)) is not None}
    tools = target.get("tools")
    return AuditReport(
        results=ordered,
        controls=tuple(sorted((_normalised_control(c) for c in controls), key=lambda c: (c.tool, c.name))),
        target=dict(target),
        generated=(generated or datetime.now(UTC)).replace(microsecond=0),
        marks=marks,
        baseline=baseline.source if baseline else None,
        unmatched=tuple(baseline.unmatched(ordered, tools)) if baseline else (),
    )


def normalise(text: str) -> str:
    return _SANDBOX_PATH.sub(SANDBOX, text)


def _normalised(result: Result) -> Result:
    return replace(
        result,
        reason=normalise(result.reason),
        evidence=tuple(normalise(line) for line in result.evidence),
    )


def _normalised_control(control: ControlResult) -> ControlResult:
    return replace(control, detail=normalise(control.detail))


def rerun_command(target: Mapping[str, Any], keyword: str) -> str:
    """The pytest command that re-runs just the items `-k keyword` selects."""
    words = ["pytest", "-p", "no:cacheprovider"]
    profile = target.get("profile")
    if profile:
        words += ["--mcp-profile", str(profile)]
    if not profile or target.get("command_source") == "--mcp-target":
        words += ["--mcp-target", str(target.get("command", ""))]
    if target.get("root_from") == "cwd":
        words += ["--mcp-root-from", "cwd"]
    words += ["-k", keyword]
    return shlex.join(words)
