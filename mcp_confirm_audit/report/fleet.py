"""The merged summary of many audits: one markdown table, one SARIF with a run per target, one JSON.

It consumes what each audit already wrote (a folder with audit.json and
audit.sarif, or a downloaded CI artifact of one) and, for a target that did
not finish, the one-line reason its run gave. It runs nothing, so the same
summary comes from `fleet` on one machine and from `merge` over the
artifacts of a CI matrix.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..models import REFUSAL_CONTROLS
from .review_md import _table, inert
from .sarif import SCHEMA_URI

# What a fleet run leaves beside a target's reports: its exit code and why it failed.
STATUS_FILE = "fleet-status.json"
SUMMARY_FILES = ("fleet.md", "fleet.html", "fleet.sarif", "fleet.json")
# What one target's folder holds for a registry: target, version, digest, catalogue, counts, time.
RECORD_FILE = "record.json"
_VERDICTS = ("vulnerable", "weak", "refused", "inconclusive", "not_applicable", "excluded")
# The worst verdict first: a family's cell in the grid shows the first of these it holds.
WORST_FIRST = ("vulnerable", "weak", "inconclusive", "refused", "excluded", "not_applicable")


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
    def families(self) -> dict[str, str]:
        """Each family's worst verdict on this target."""
        worst: dict[str, str] = {}
        for r in (self.audit or {}).get("results") or []:
            family, verdict = str(r.get("family")), str(r.get("verdict"))
            if verdict not in WORST_FIRST:
                continue
            if family not in worst or WORST_FIRST.index(verdict) < WORST_FIRST.index(worst[family]):
                worst[family] = verdict
        return worst

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
        # A refusal control that failed is a finding; a failed approve or search leaves nothing judged.
        failed = sum(
            bool(c.get("name") in REFUSAL_CONTROLS and c.get("applicable") and not c.get("passed"))
            for c in controls
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
        extra={k: status[k] for k in ("started", "finished", "seconds") if k in status},
    )


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def server_of(outcome: TargetOutcome) -> str:
    server = ((outcome.audit or {}).get("target") or {}).get("server") or {}
    name, version = server.get("name"), server.get("version")
    declared = ((outcome.audit or {}).get("target") or {}).get("version")
    if name and declared:
        # The profile's word wins: a legacy FastMCP server reports the SDK's version as its own.
        return f"{name} {declared} (declared)"
    if name and version:
        return f"{name} {version}"
    return str(name or "-")


def review_link(outcome: TargetOutcome, directory: Path) -> str | None:
    """The target's review.md relative to the summary's folder, URL-quoted; None when it has none."""
    review = Path(outcome.folder) / "review.md"
    if not outcome.folder or not review.is_file():
        return None
    return quote(Path(os.path.relpath(review.resolve(), directory.resolve())).as_posix())


def families_of(outcomes: Sequence[TargetOutcome]) -> list[str]:
    return sorted({family for o in outcomes for family in o.families})


def markdown(outcomes: Sequence[TargetOutcome], directory: Path | None = None) -> str:
    """A row per target (a failed one with its one-line reason), then the grid of target by family.

    Target strings are code spans; the links are our own paths, URL-quoted.
    """
    here = directory or Path.cwd()
    head = ["target", "server", "status", "findings", *_VERDICTS, "review", "judged, or why it failed"]
    rows = []
    for o in outcomes:
        judged = ((o.audit or {}).get("summary") or {}).get("judged") or ""
        reason = o.failure or judged
        counts = [str(o.counts[v]) if o.audit is not None else "-" for v in _VERDICTS]
        link = review_link(o, here)
        rows.append(
            [
                inert(o.name),
                inert(server_of(o)),
                o.status,
                str(o.findings),
                *counts,
                f"[review.md]({link})" if link else "-",
                inert(reason or "-"),
            ]
        )
    failed = [o for o in outcomes if o.status == "failed"]
    findings = sum(o.findings for o in outcomes)
    families = families_of(outcomes)
    grid = [
        [inert(o.name), *(o.families.get(f, "-") if o.audit is not None else "failed" for f in families)]
        for o in outcomes
    ]
    lines = [
        "# Fleet audit",
        "",
        f"{len(outcomes)} target(s): {len(outcomes) - len(failed)} audited, {len(failed)} failed; "
        f"{findings} finding(s) in all. Each target's own review.md is linked.",
        "",
        _table(head, rows),
    ]
    if families:
        lines += [
            "",
            "## By family: the worst verdict in each cell",
            "",
            _table(["target", *families], grid),
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
                "record": record(o),
            }
            for o in outcomes
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def record(outcome: TargetOutcome) -> dict[str, Any]:
    """What a registry stores of one target's audit, from its reports only.

    `digest` is the SHA-256 of what was audited (the command, the profile, the declared version,
    the server's name and version, the tools), `catalogue` the tool's version and the SHA-256 of
    the attacks that ran (id and variant): two records with the same of both judged the same.
    """
    audit = outcome.audit or {}
    target = audit.get("target") or {}
    server = target.get("server") or {}
    audited = {k: target.get(k) for k in ("command", "profile", "version", "server", "tools")}
    ran = sorted(f"{r.get('id')}:{r.get('variant')}" for r in audit.get("results") or ())
    return {
        "target": outcome.name,
        "status": outcome.status,
        "server": server.get("name"),
        "version": target.get("version") or server.get("version"),
        "digest": _sha256(audited) if audit else None,
        "catalogue": {
            "tool_version": (audit.get("tool") or {}).get("version"),
            "attacks": len(ran),
            "digest": _sha256(ran) if audit else None,
        },
        "verdicts": outcome.counts if outcome.audit is not None else None,
        "findings": outcome.findings,
        "generated": audit.get("generated"),
        **dict(outcome.extra),
    }


def _sha256(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


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
