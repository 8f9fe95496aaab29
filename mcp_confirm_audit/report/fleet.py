"""The merged summary of many audits: one markdown table, one SARIF with a run per target, one JSON.

It consumes what each audit already wrote (a folder with audit.json and
audit.sarif, or a downloaded CI artifact of one) and, for a target that did
not finish, the one-line reason its run gave. It runs nothing, so the same
summary comes from `fleet` on one machine and from `merge` over the
artifacts of a CI matrix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from .review_md import _table, inert
from .sarif import SCHEMA_URI

# What a fleet run leaves beside a target's reports: its exit code and why it failed.
STATUS_FILE = "fleet-status.json"
SUMMARY_FILES = ("fleet.md", "fleet.sarif", "fleet.json")
_VERDICTS = ("vulnerable", "weak", "refused", "inconclusive", "not_applicable")


@dataclass(frozen=True, slots=True)
class TargetOutcome:
    """One target of a fleet: its name, its reports (if any), and why it failed (if it did)."""

    name: str
    audit: Mapping[str, Any] | None = None
    sarif: Mapping[str, Any] | None = None
    exit_code: int | None = None
    failure: str | None = None
    folder: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        if self.failure or self.audit is None:
            return "failed"
        results = self.audit.get("results") or []
        controls = self.audit.get("controls") or []
        if any(c.get("name") == "approve" and not c.get("passed") for c in controls):
            return "not audited"
        if any(r.get("verdict") == "inconclusive" for r in results):
            return "inconclusive"
        if self.findings:
            return "findings"
        return "clean"

    @property
    def counts(self) -> dict[str, int]:
        results = (self.audit or {}).get("results") or []
        return {v: sum(r.get("verdict") == v for r in results) for v in _VERDICTS}

    @property
    def findings(self) -> int:
        if self.audit is None:
            return 0
        results = self.audit.get("results") or []
        controls = self.audit.get("controls") or []
        accepted = sum(
            r.get("verdict") in ("vulnerable", "weak")
            and (r.get("baseline") or {}).get("status") == "accepted"
            for r in results
        )
        found = sum(r.get("verdict") in ("vulnerable", "weak") for r in results) - accepted
        failed = sum(
            bool(c.get("name") != "approve" and c.get("applicable") and not c.get("passed")) for c in controls
        )
        return int(found + failed)


def read_folder(name: str, folder: Path) -> TargetOutcome:
    """A target's reports as an audit (or a fleet run, or a CI artifact) left them in `folder`."""
    status = _json(folder / STATUS_FILE) or {}
    audit, sarif = _json(folder / "audit.json"), _json(folder / "audit.sarif")
    failure = status.get("failure")
    if audit is None and not failure:
        failure = f"no audit.json in {folder}"
    return TargetOutcome(
        name=str(status.get("name") or name),
        audit=audit,
        sarif=sarif,
        exit_code=status.get("exit_code"),
        failure=failure,
        folder=str(folder),
    )


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write_summary(directory: Path, outcomes: Sequence[TargetOutcome]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    texts = (markdown(outcomes), sarif(outcomes), as_json(outcomes))
    paths = [directory / name for name in SUMMARY_FILES]
    for path, text in zip(paths, texts, strict=True):
        path.write_text(text, encoding="utf-8")
    return paths


def _server(outcome: TargetOutcome) -> str:
    server = ((outcome.audit or {}).get("target") or {}).get("server") or {}
    name, version = server.get("name"), server.get("version")
    return f"{name} {version}" if name and version else str(name or "-")


def markdown(outcomes: Sequence[TargetOutcome]) -> str:
    """One row per target; a failed target with its one-line reason. Target strings are code spans."""
    head = ["target", "server", "status", "findings", *_VERDICTS, "judged, or why it failed"]
    rows = []
    for o in outcomes:
        judged = ((o.audit or {}).get("summary") or {}).get("judged") or ""
        reason = o.failure or judged
        counts = [str(o.counts[v]) if o.audit is not None else "-" for v in _VERDICTS]
        rows.append(
            [inert(o.name), inert(_server(o)), o.status, str(o.findings), *counts, inert(reason or "-")]
        )
    failed = [o for o in outcomes if o.status == "failed"]
    findings = sum(o.findings for o in outcomes)
    lines = [
        "# Fleet audit",
        "",
        f"{len(outcomes)} target(s): {len(outcomes) - len(failed)} audited, {len(failed)} failed; "
        f"{findings} finding(s) in all. Each target's own review.md is in its folder.",
        "",
        _table(head, rows),
    ]
    return "\n".join(lines) + "\n"


def sarif(outcomes: Sequence[TargetOutcome]) -> str:
    """One SARIF file, one run per target: each audited target's own run, with its own category."""
    runs = []
    for o in outcomes:
        own = list((o.sarif or {}).get("runs") or [])
        if own:
            run = dict(own[0])
            # One category per target, so a fixed alert of one target closes on its own.
            run["automationDetails"] = {"id": f"mcp-confirm-audit/{o.name}/"}
            runs.append(run)
        else:
            runs.append(_failed_run(o))
    document = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": runs}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _failed_run(outcome: TargetOutcome) -> dict[str, Any]:
    # A target that did not run is an unsuccessful invocation, never an empty (green) run.
    return {
        "tool": {"driver": {"name": "mcp-confirm-audit", "version": __version__, "rules": []}},
        "automationDetails": {"id": f"mcp-confirm-audit/{outcome.name}/"},
        "invocations": [
            {
                "executionSuccessful": False,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": f"{outcome.name}: {outcome.failure or 'not run'}"}}
                ],
            }
        ],
        "results": [],
    }


def as_json(outcomes: Sequence[TargetOutcome]) -> str:
    document = {
        "tool": {"name": "mcp-confirm-audit", "version": __version__},
        "targets": [
            {
                "name": o.name,
                "status": o.status,
                "exit_code": o.exit_code,
                "failure": o.failure,
                "server": ((o.audit or {}).get("target") or {}).get("server"),
                "findings": o.findings,
                "verdicts": o.counts if o.audit is not None else None,
                "judged": ((o.audit or {}).get("summary") or {}).get("judged"),
                "folder": o.folder,
            }
            for o in outcomes
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def artifact_name(folder: Path) -> str:
    """A downloaded artifact's folder named back to its target (`mcp-audit-NAME` as the action names it)."""
    return folder.name.removeprefix("mcp-audit-") or folder.name


def folders_with_reports(roots: Iterable[Path]) -> list[Path]:
    """Every folder under `roots` that holds an audit.json or a fleet status: a target each."""
    found: list[Path] = []
    for root in roots:
        candidates = [root, *sorted(p for p in root.rglob("*") if p.is_dir())] if root.is_dir() else [root]
        found += [p for p in candidates if (p / "audit.json").is_file() or (p / STATUS_FILE).is_file()]
    return list(dict.fromkeys(found))
