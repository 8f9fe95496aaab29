"""The action's audit step: run the audit, then tell the workflow what it found.

It runs `mcp-confirm-audit run` with the inputs (read from the environment
only: MCA_TARGET, MCA_PROFILE, MCA_ARGS, MCA_BASELINE, MCA_FAIL_ON,
MCA_REPORT_DIR, MCA_CATEGORY), and writes:

- to `$GITHUB_OUTPUT`: the count of each verdict, the findings at or above
  `fail-on`, the gate's result and why, the report paths and the SARIF
  category;
- to `$GITHUB_STEP_SUMMARY`: review.md's head and summary (what was judged,
  what to fix), the PR-facing view, since code scanning annotates only lines
  a PR changed.

It never fails the job itself: the upload steps run after it, and the gate
step last fails the job when `gate` is `fail`. A run that judged nothing is
never a pass: an attack that could not be judged, a failed honest flow, a
stale baseline entry or a run that did not complete fail the gate whatever
`fail-on` says.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEVERITIES = ("critical", "high", "medium", "low", "info")
FAIL_ON = (*SEVERITIES, "none")
VERDICTS = ("vulnerable", "weak", "refused", "inconclusive", "not_applicable", "excluded")
# A failed refusal control (a decline that acted) is filed as high, as the SARIF rule is.
_CONTROL_SEVERITY = "high"


class InputError(Exception):
    """An input the action cannot use; the message says which and how to fix it."""


@dataclass(frozen=True)
class Inputs:
    target: str
    profile: str
    args: tuple[str, ...]
    baseline: str
    fail_on: str
    report_dir: Path
    category: str

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Inputs:
        def get(name: str) -> str:
            return environ.get(name, "").strip()

        if not get("MCA_TARGET") and not get("MCA_PROFILE"):
            raise InputError("give the action a target (the server command or URL) or a profile")
        fail_on = get("MCA_FAIL_ON").lower() or "medium"
        if fail_on not in FAIL_ON:
            raise InputError(f"fail-on must be one of {', '.join(FAIL_ON)}, got {fail_on!r}")
        try:
            args = tuple(shlex.split(get("MCA_ARGS")))
        except ValueError as exc:
            raise InputError(f"args cannot be split into words ({exc}); check its quotes") from None
        return cls(
            target=get("MCA_TARGET"),
            profile=get("MCA_PROFILE"),
            args=args,
            baseline=get("MCA_BASELINE"),
            fail_on=fail_on,
            report_dir=Path(get("MCA_REPORT_DIR") or "mcp-audit"),
            category=get("MCA_CATEGORY"),
        )

    def command(self) -> list[str]:
        words = [sys.executable, "-m", "mcp_confirm_audit.cli.main", "run"]
        if self.target:
            words.append(self.target)
        if self.profile:
            words += ["--profile", self.profile]
        if self.baseline:
            words += ["--baseline", self.baseline]
        words += ["--report-dir", str(self.report_dir)]
        return [*words, "--", *self.args] if self.args else words


@dataclass(frozen=True)
class Gate:
    passed: bool
    reason: str
    counts: Mapping[str, int]
    findings: int


def _at_least(severity: str, threshold: str) -> bool:
    if threshold == "none":
        return False
    return SEVERITIES.index(severity) <= SEVERITIES.index(threshold) if severity in SEVERITIES else True


def judge(audit: Mapping[str, Any] | None, exit_code: int, fail_on: str) -> Gate:
    """The gate: a pure function of the audit.json (None: none was written) and the run's exit code."""
    if audit is None:
        said = {2: "the target would not start or offered no tool", 4: "a usage error (see the log)"}
        return Gate(False, f"no report: {said.get(exit_code, f'the run exited {exit_code}')}", {}, 0)
    results = audit.get("results") or []
    counts = {verdict: sum(r.get("verdict") == verdict for r in results) for verdict in VERDICTS}
    accepted = [r for r in results if (r.get("baseline") or {}).get("status") == "accepted"]
    findings = [
        r
        for r in results
        if r.get("verdict") in ("vulnerable", "weak")
        and r not in accepted
        and _at_least(str(r.get("rated_severity")), fail_on)
    ]
    controls = audit.get("controls") or []
    # The refusal controls that failed (a decline that acted), as audit.json counts them: a search that
    # gave up is no finding. An audit.json written before that count: every failed control but approve.
    counted = (audit.get("summary") or {}).get("failed_refusal_controls")
    failed_controls = (
        counted
        if isinstance(counted, int)
        else sum(
            bool(c.get("name") != "approve" and c.get("applicable") and not c.get("passed")) for c in controls
        )
    )
    findings_count = len(findings) + (failed_controls if _at_least(_CONTROL_SEVERITY, fail_on) else 0)
    not_audited = [c for c in controls if c.get("name") == "approve" and not c.get("passed")]
    stale = ((audit.get("baseline") or {}).get("stale")) or 0
    stopped = (audit.get("scope") or {}).get("stopped_early")
    if not_audited:
        reason = (
            f"not audited: the honest flow failed on {', '.join(str(c.get('tool')) for c in not_audited)}"
        )
    elif counts["inconclusive"]:
        reason = f"{counts['inconclusive']} attack(s) could not be judged (inconclusive is never a pass)"
    elif stale:
        reason = f"{stale} stale baseline entr(y/ies): a fixed finding still listed"
    elif stopped:
        reason = f"the run stopped early ({stopped})"
    elif findings_count:
        reason = f"{findings_count} finding(s) at or above {fail_on}"
    else:
        threshold = "" if fail_on == "none" else f" at or above {fail_on}"
        return Gate(True, f"no finding{threshold}", counts, 0)
    return Gate(False, reason, counts, findings_count)


def summary_of(review: str) -> str:
    """review.md from its title to the end of its Summary section: what was judged, what to fix."""
    cut = re.search(r"^## (?!Summary$)", review, flags=re.MULTILINE)
    head = review[: cut.start()] if cut else review
    return head.rstrip() + "\n"


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(text)


def _outputs(pairs: Mapping[str, object]) -> str:
    lines = []
    for key, value in pairs.items():
        text = str(value)
        # One line each: a value a target chose could otherwise write a second output.
        lines.append(f"{key}={' '.join(text.splitlines())}")
    return "\n".join(lines) + "\n"


def category_of(inputs: Inputs, audit: Mapping[str, Any] | None) -> str:
    if inputs.category:
        return inputs.category
    name = (
        Path(inputs.profile).stem
        if inputs.profile
        else ((audit or {}).get("target") or {}).get("server", {}).get("name") or "target"
    )
    return f"mcp-confirm-audit/{re.sub(r'[^A-Za-z0-9._-]+', '-', str(name))}"


def main(environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    output, summary = environ.get("GITHUB_OUTPUT"), environ.get("GITHUB_STEP_SUMMARY")
    try:
        inputs = Inputs.from_environ(environ)
    except InputError as exc:
        print(f"mcp-confirm-audit action: {exc}", file=sys.stderr)
        _append(output, _outputs({"gate": "fail", "gate-reason": str(exc)}))
        _append(summary, f"## mcp-confirm-audit\n\n**Gate: fail**: {exc}\n")
        return 0
    inputs.report_dir.mkdir(parents=True, exist_ok=True)
    # The log shows strings the target chose (tool names, replies): no line of it may be read
    # as a workflow command (`::add-mask::`, `::error::`), so commands are off while it runs.
    resume = secrets.token_hex(16)
    print(f"::stop-commands::{resume}", flush=True)
    try:
        exit_code = subprocess.call(inputs.command())
    finally:
        print(f"::{resume}::", flush=True)
    paths = {name: inputs.report_dir / name for name in ("audit.json", "review.md", "audit.sarif")}
    audit = json.loads(paths["audit.json"].read_text()) if paths["audit.json"].is_file() else None
    gate = judge(audit, exit_code, inputs.fail_on)
    _append(
        output,
        _outputs(
            {
                **{verdict.replace("_", "-"): gate.counts.get(verdict, 0) for verdict in VERDICTS},
                "findings": gate.findings,
                "gate": "pass" if gate.passed else "fail",
                "gate-reason": gate.reason,
                "exit-code": exit_code,
                "report-dir": inputs.report_dir,
                "audit-json": paths["audit.json"] if audit is not None else "",
                "review-md": paths["review.md"] if paths["review.md"].is_file() else "",
                "sarif-file": paths["audit.sarif"] if paths["audit.sarif"].is_file() else "",
                "category": (category := category_of(inputs, audit)),
                # How the target's processes ran: confined (which namespaces), or not and why.
                "confinement": ((audit or {}).get("target") or {}).get("confinement", ""),
                # Artifact names are unique per run and take no slash: one per target of a matrix.
                "artifact": "mcp-audit-" + category.removeprefix("mcp-confirm-audit/").replace("/", "-"),
            }
        ),
    )
    verdict_line = (
        f"**Gate: {'pass' if gate.passed else 'fail'}** (fail-on: {inputs.fail_on}): {gate.reason}\n\n"
    )
    review = paths["review.md"].read_text(encoding="utf-8") if paths["review.md"].is_file() else ""
    _append(summary, verdict_line + (summary_of(review) if review else "No review was written.\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
