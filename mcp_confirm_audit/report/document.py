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
from operator import attrgetter
from typing import Any

from ..engine.baseline import Baseline, Mark
from ..engine.session import STOPPED_ANSWERING
from ..models import SEARCH, ControlResult, Result, Verdict

SANDBOX = "{sandbox}"
# The sandbox is `mkdtemp(prefix="mcp-audit-")` in TMPDIR, or in /dev/shm when
# TMPDIR is unset (sandbox.scratch_directory); evidence may cut its name short
# (long messages are abbreviated), so the random part is matched loosely.
_SCRATCH = sorted({os.path.realpath(tempfile.gettempdir()), "/dev/shm"})
_SANDBOX_PATH = re.compile(f"(?:{'|'.join(map(re.escape, _SCRATCH))})" + r"/mcp-audit-[A-Za-z0-9_]*")
# In every sandbox path: text without it (nearly every result's) has nothing to rewrite.
_SANDBOX_MARK = "/mcp-audit-"

FINDINGS = (Verdict.VULNERABLE, Verdict.WEAK)


def refused_by(result: Result) -> str:
    """Which layer refused the attack, as every writer words it; `-` where nothing was judged.

    A vulnerable result is refused by nothing. Most took effect; one judged on what the person was
    shown (a forged question, a form asking for a secret) changed nothing, and says so.
    """
    if result.verdict is Verdict.VULNERABLE:
        return "none (it took effect)" if result.effect.happened else "none (nothing refused it)"
    if result.layer is not None and result.verdict in (*FINDINGS, Verdict.REFUSED):
        return result.layer.value
    return "-"


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
    # What was asked to run and how much did: {"attacks": collected, "selected":
    # after -k/-m/--lf, "selected_by": "-k REPLAY", "stopped_early": "-x"}.
    scope: Mapping[str, Any] = field(default_factory=dict)

    def mark(self, result: Result) -> Mark | None:
        return self.marks.get((result.id, result.tool))

    @property
    def findings(self) -> tuple[Result, ...]:
        return tuple(r for r in self.results if r.verdict in FINDINGS)

    @property
    def failed_controls(self) -> tuple[ControlResult, ...]:
        """Refusal controls that failed: findings (`ControlResult.finding`).

        A failed approve, or a zero-configuration search that gave up, is none: it leaves the tool's
        attacks unjudged, which the headline says ("not audited: the honest flow failed").
        """
        return tuple(c for c in self.controls if c.finding)

    @property
    def failed_searches(self) -> tuple[ControlResult, ...]:
        """Zero configuration's searches for the arguments a tool wants that gave up: why approve failed."""
        return tuple(c for c in self.controls if c.name == SEARCH and not c.passed)

    @property
    def failed_approvals(self) -> tuple[ControlResult, ...]:
        return tuple(c for c in self.controls if c.name == "approve" and not c.passed)

    @property
    def seed(self) -> int | None:
        generation = self.target.get("generation") or {}
        seed = generation.get("seed")
        return seed if isinstance(seed, int) else None


def headline(report: AuditReport) -> str:
    """What was judged, before any count: a run that judged nothing must not read clean."""
    scope = report.scope
    run = len(report.results)
    collected = int(scope.get("attacks") or run)
    selected = int(scope.get("selected") or run)
    parts = []
    failed = report.failed_approvals
    tools = list(report.target.get("tools") or sorted({c.tool for c in report.controls}))
    if failed:
        # One clause a tool: the headline is read first, and several tools' whole details pasted together
        # bury the one that matters; each is whole in its control.
        reasons = "; ".join(f"{c.tool}: {_head(c.detail)}" for c in failed)
        if any(len(c.detail) > _HEADLINE_REASON for c in failed):
            reasons += "; each whole under its approve control"
        what = (
            "not audited"
            if len(failed) >= len(tools)
            else f"not audited on {len(failed)} of {len(tools)} tools"
        )
        parts.append(f"{what}: the honest flow failed ({reasons}), so no attack on it could be judged")
    if scope.get("stopped_early"):
        parts.append(f"stopped early ({scope['stopped_early']}): {run} of {selected} selected attacks run")
    if selected < collected:
        parts.append(
            f"partial: {selected} of {collected} attacks selected ({scope.get('selected_by') or 'a selection'})"
        )
    verdicts = [r.verdict for r in report.results]
    unjudged = verdicts.count(Verdict.INCONCLUSIVE)
    if unjudged and not failed:
        down = [
            r for r in report.results if r.verdict is Verdict.INCONCLUSIVE and STOPPED_ANSWERING in r.reason
        ]
        since = (
            f", {len(down)} of them because {STOPPED_ANSWERING}{down[0].reason.split(STOPPED_ANSWERING, 1)[1].split(',', 1)[0]} and "
            "did not answer again"
            if down
            else ""
        )
        parts.append(f"{unjudged} of {run} attacks could not be judged (inconclusive){since}")
    if excluded := verdicts.count(Verdict.EXCLUDED):
        parts.append(f"{excluded} of {run} attacks excluded by the profile, each with its reason")
    if not parts:
        return f"complete: all {run} attacks run and judged"
    return "; ".join(parts)


# The characters of a failed approve control's detail the headline quotes.
_HEADLINE_REASON = 200


def _head(detail: str) -> str:
    return detail if len(detail) <= _HEADLINE_REASON else detail[:_HEADLINE_REASON].rstrip() + "…"


def audit_is_complete(report: AuditReport) -> bool:
    return headline(report).startswith("complete:")


# Long evidence lines keep both ends in review.md and the terminal (the
# request, and what came back); audit.json keeps them whole.
SHORT_LINE = 240


def shorten(line: str, limit: int = SHORT_LINE) -> str:
    if len(line) <= limit:
        return line
    end, start = _escape_edge(line, limit * 2 // 3), _escape_edge(line, len(line) - limit // 4)
    return f"{line[:end]}…{line[start:]} ({len(line)} chars; whole in audit.json)"


_ESCAPE_LENGTH = {"x": 4, "u": 6, "U": 10}


def _escape_edge(line: str, at: int) -> int:
    """`at`, or the start of the escape (\\u202e, \\U000e0069) it falls inside: never cut one in two."""
    start = line.rfind("\\", max(0, at - 9), at)
    if start != -1 and at < start + _ESCAPE_LENGTH.get(line[start + 1 : start + 2], 2):
        return start
    return at


def build_report(
    results: Sequence[Result],
    controls: Sequence[ControlResult],
    target: Mapping[str, Any],
    *,
    generated: datetime | None = None,
    baseline: Baseline | None = None,
    scope: Mapping[str, Any] | None = None,
) -> AuditReport:
    ordered = tuple(sorted(map(_normalised, results), key=_BY_TOOL_AND_ID))
    marks = {}
    if baseline is not None:
        marks = {(r.id, r.tool): m for r in ordered if (m := baseline.mark(r)) is not None}
    tools = target.get("tools")
    return AuditReport(
        scope=dict(scope or {}),
        results=ordered,
        controls=tuple(sorted(map(_normalised_control, controls), key=_BY_TOOL_AND_NAME)),
        target=dict(target),
        generated=(generated or datetime.now(UTC)).replace(microsecond=0),
        marks=marks,
        baseline=baseline.source if baseline else None,
        unmatched=tuple(baseline.unmatched(ordered, tools)) if baseline else (),
    )


_BY_TOOL_AND_ID = attrgetter("tool", "id")
_BY_TOOL_AND_NAME = attrgetter("tool", "name")


def normalise(text: str) -> str:
    return _SANDBOX_PATH.sub(SANDBOX, text)


def _normalised(result: Result) -> Result:
    # One search of all its text first: a sandbox path lies within one line, and few results hold one.
    if _SANDBOX_MARK not in "\n".join((result.reason, *result.evidence)):
        return result
    return replace(
        result,
        reason=normalise(result.reason),
        evidence=tuple(normalise(line) for line in result.evidence),
    )


def _normalised_control(control: ControlResult) -> ControlResult:
    if _SANDBOX_MARK not in "\n".join((control.detail, *control.evidence)):
        return control
    return replace(
        control,
        detail=normalise(control.detail),
        evidence=tuple(normalise(line) for line in control.evidence),
    )


def rerun_command(target: Mapping[str, Any], keyword: str) -> str:
    """The command that re-runs just the items `-k keyword` selects, with the run's seed.

    `mcp-confirm-audit run`, not plain `pytest`: in the checkout that wrote the report, pytest
    would collect that project's own tests (and conftest.py) too; `run` audits only.
    """
    words = ["mcp-confirm-audit", "run"]
    profile = target.get("profile")
    if not profile or target.get("command_source") == "--mcp-target":
        words.append(str(target.get("command", "")))
    if profile:
        words += ["--profile", str(profile)]
    words.append("--")
    if target.get("root_from") == "cwd":
        words.append("--mcp-root-from=cwd")
    seed = (target.get("generation") or {}).get("seed")
    if isinstance(seed, int):
        # The generated names come from it: another seed draws other names.
        words.append(f"--mcp-seed={seed}")
    words += ["-k", keyword]
    return shlex.join(words)
