"""`audit.sarif`: SARIF 2.1.0 for code-scanning dashboards.

One rule per catalogue entry that ran (and per failed honest-flow control),
one result per finding. A finding the baseline accepts carries an external,
accepted suppression with the baseline's reason; a baselined finding that is
no longer found is a `pass` result whose baselineState is `absent`. An attack
that could not be judged is a tool execution notification, and the run is
then not marked as successful: inconclusive is never a pass. A refusal control
that could not begin (its setup failed) is a notification at level note.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import __version__
from ..engine.baseline import ACCEPTED, STALE
from ..models import (
    OWASP_ITEMS,
    REQUIREMENT_ITEMS,
    STILL_WAITING_REMEDY,
    UNASKED,
    UNASKED_REMEDY,
    ControlResult,
    Result,
    Verdict,
)
from . import jsontext
from .document import AuditReport, headline, refused_by, rerun_command

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT = "mcpConfirmAudit/v1"
# Every location is relative to this base: the repository the audit ran in, as code scanning
# places alerts (a bare absolute path, or one with ../, is placed nowhere).
SRCROOT = "%SRCROOT%"
_BASES = {
    SRCROOT: {"description": {"text": "The root of the repository (else the folder) the audit ran in."}}
}
# GitHub code scanning ranks alerts by this property (a CVSS-like score).
_SECURITY_SEVERITY = {"critical": "9.5", "high": "8.0", "medium": "5.5", "low": "3.0", "info": "0.0"}


class Sarif:
    filename = "audit.sarif"

    def render(self, report: AuditReport) -> str:
        rules: dict[str, dict[str, Any]] = {}
        for r in report.results:
            if r.id not in rules:  # one rule an entry, whatever number of tools it ran on
                rules[r.id] = _rule(r)
        # Every rule that could have fired, on a clean run too, so that an alert
        # fixed since the last upload closes: each refusal control that ran, and approve.
        # Another control (a search, the bookkeeping) is no finding whatever it says: no rule.
        for c in report.controls:
            if c.name == "approve":
                rules.setdefault(_control_rule_id(c), _approve_rule())
            elif c.refusal and c.applicable:
                rules.setdefault(_control_rule_id(c), _control_rule(c))
        index = {rule_id: i for i, rule_id in enumerate(rules)}
        results = [_result(report, r, index[r.id]) for r in report.results if _reported(report, r)]
        results += [_control_result(report, c, index[_control_rule_id(c)]) for c in report.failed_controls]
        # A run whose honest flow failed judged nothing: a result of its own,
        # so a dashboard shows that, never an empty (green) run.
        for c in report.failed_approvals:
            results.append(_approve_result(report, c, index[_control_rule_id(c)]))
        unjudged = [r for r in report.results if r.verdict is Verdict.INCONCLUSIVE]
        run: dict[str, Any] = {
            "tool": {
                "driver": {
                    "name": "mcp-confirm-audit",
                    "version": __version__,
                    "semanticVersion": __version__,
                    "rules": list(rules.values()),
                }
            },
            "automationDetails": {"id": f"mcp-confirm-audit/{_server_name(report)}/"},
            "originalUriBaseIds": _BASES,
            "invocations": [
                {
                    "executionSuccessful": not unjudged and not report.failed_approvals,
                    "endTimeUtc": report.generated.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "toolExecutionNotifications": [
                        {
                            "level": "error",
                            "message": {"text": f"{r.id} on {r.tool} could not be judged: {r.reason}"},
                            "descriptor": {"id": r.id},
                        }
                        for r in unjudged
                    ]
                    + [
                        {
                            "level": "error",
                            "message": {"text": f"the honest flow failed on {c.tool}: {c.detail}"},
                        }
                        for c in report.failed_approvals
                    ]
                    # A refusal control that could not begin is no result (it never said no to anything),
                    # but what it leaves untested is said: a note, the run still successful.
                    + [
                        {"level": "note", "message": {"text": f"control {c.name} on {c.tool} {c.detail}"}}
                        for c in report.controls
                        if c.could_not_begin
                    ],
                    # A rule the profile turned off, with the person's reason: not run, never a pass.
                    "toolConfigurationNotifications": [
                        {
                            "level": "note",
                            "message": {"text": f"{r.id} on {r.tool}: {r.reason}"},
                            "descriptor": {"id": r.id},
                        }
                        for r in report.results
                        if r.verdict is Verdict.EXCLUDED
                    ],
                }
            ],
            "results": results,
            "taxonomies": _taxonomies(),
            "properties": {"target": dict(report.target), "judged": headline(report)},
        }
        document = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
        return jsontext.dumps(document) + "\n"


def _server_name(report: AuditReport) -> str:
    return str((report.target.get("server") or {}).get("name") or "target")


def _reported(report: AuditReport, result: Result) -> bool:
    if result.verdict in (Verdict.VULNERABLE, Verdict.WEAK):
        return True
    mark = report.mark(result)
    return mark is not None and mark.status == STALE


def _rule(result: Result) -> dict[str, Any]:
    requirement = "; ".join(result.refs) or "-"
    derived = f" It is derived: {result.derived}" if result.level == "DERIVED" and result.derived else ""
    tags = [
        "security",
        result.family,
        # The form code scanning reads a CWE in (and links to MITRE's entry).
        *[f"external/cwe/cwe-{ref.removeprefix('CWE-')}" for ref in result.refs if ref.startswith("CWE-")],
        *[f"OWASP-{item}" for item in result.owasp],
        *result.requirements,
    ]
    owasp = [f"{item} {OWASP_ITEMS.get(item, '')}".strip() for item in result.owasp]
    rated = result.severity_if(Verdict.VULNERABLE)
    return {
        "id": result.id,
        "name": result.variant,
        "shortDescription": {"text": result.title},
        "fullDescription": {
            "text": f"{result.title} ({result.family} attack, a {result.level} requirement)."
        },
        "help": {
            "text": f"Remedy: {result.remedy}\nRequirement ({result.level}): {requirement}.{derived}"
            + (f"\nOWASP: {'; '.join(owasp)}" if owasp else ""),
            "markdown": "\n\n".join(
                [
                    f"**Remedy**: {result.remedy}",
                    f"**Requirement ({result.level})**" + (f": derived. {result.derived}" if derived else ""),
                    "\n".join([f"- {ref}" for ref in result.refs]),
                    *([f"**OWASP**: {'; '.join(owasp)}"] if owasp else []),
                ]
            ),
        },
        "defaultConfiguration": {"level": _LEVEL_OF_SEVERITY.get(rated, "warning")},
        "relationships": [
            *[_relationship(item, _OWASP_LIST[item[:3]]) for item in result.owasp],
            *[_relationship(item, _REQUIREMENT_LIST[item.split("-")[0]]) for item in result.requirements],
        ],
        "properties": {
            "tags": list(dict.fromkeys(tags)),
            "family": result.family,
            "severity": result.severity,
            "requirement-level": result.level,
            "owasp": list(result.owasp),
            "requirements": list(result.requirements),
            "security-severity": _SECURITY_SEVERITY.get(rated, "5.5"),
        },
    }


# A rule's level and score follow the severity a vulnerable finding of it is
# filed under (a SHOULD at most medium), so level, score and review agree.
_LEVEL_OF_SEVERITY = {
    "critical": "error",
    "high": "error",
    "medium": "warning",
    "low": "note",
    "info": "note",
}


def _locations(report: AuditReport, tool: str) -> list[dict[str, Any]]:
    # A dynamic audit has no source line; the profile is the file in the
    # repository that names the target, so code scanning has something to show.
    location: dict[str, Any] = {
        "logicalLocations": [
            {"name": tool, "kind": "function", "fullyQualifiedName": f"{_server_name(report)}/{tool}"}
        ]
    }
    # GitHub rejects a whole file in which one result has no physical location.
    location["physicalLocation"] = {
        "artifactLocation": {"uri": in_repository(anchor(report.target)), "uriBaseId": SRCROOT},
        "region": {"startLine": 1},
    }
    return [location]


def anchor(target: Mapping[str, Any]) -> str:
    """The repository file a result is shown on: the profile; else the script the command runs
    (`python server.py`, `py:app/server.py:build`); else the repository's README.md, which
    nearly every repository has (give a profile to anchor results to it)."""
    if target.get("profile"):
        return str(target["profile"])
    command = str(target.get("command") or "")
    if command.startswith("py:") and (module := command[3:].rsplit(":", 1)[0]).endswith(".py"):
        return module
    if not command.startswith(("http://", "https://", "py:")):
        try:
            words = shlex.split(command)
        except ValueError:
            words = []
        for word in words[1:] if len(words) > 1 else words:
            if word.endswith(_SCRIPTS) and "{" not in word:
                return word
    return "README.md"


_SCRIPTS = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".sh", ".jar")


def repository_root(start: Path | None = None) -> Path:
    """The repository the audit runs in: GITHUB_WORKSPACE in Actions, else the nearest folder
    above the working one with a .git; else the working folder itself."""
    here = (start or Path.cwd()).resolve()
    if workspace := os.environ.get("GITHUB_WORKSPACE"):
        return Path(workspace).resolve()
    return next((p for p in (here, *here.parents) if (p / ".git").exists()), here)


def in_repository(path: str, root: Path | None = None) -> str:
    """`path` (relative to the working folder, or absolute) as a URI relative to the repository.

    A file outside the repository cannot be placed: the repository's README.md stands in.
    """
    root = root or repository_root()
    full = Path(path) if Path(path).is_absolute() else Path.cwd() / path
    relative = Path(os.path.relpath(full.resolve(), root))
    if relative.parts[:1] == ("..",) or relative.is_absolute():
        return "README.md"
    return relative.as_posix()


def _result(report: AuditReport, result: Result, rule_index: int) -> dict[str, Any]:
    mark = report.mark(result)
    refused = refused_by(result)
    entry: dict[str, Any] = {
        "ruleId": result.id,
        "ruleIndex": rule_index,
        "kind": "fail",
        "level": "error" if result.verdict is Verdict.VULNERABLE else "warning",
        "message": {
            "text": f"{result.verdict.value.upper()} on {result.tool} (refused by {refused}): {result.reason}"
        },
        "locations": _locations(report, result.tool),
        "partialFingerprints": {FINGERPRINT: f"{result.id}:{result.tool}"},
        "properties": {
            "tool": result.tool,
            "verdict": result.verdict.value,
            "severity": result.rated_severity,
            "layer": result.layer.value if result.layer else None,
            "asked_user": result.asked_user,
            **({"protocol": result.era} if result.era else {}),
            "evidence": list(result.evidence),
            "reproduce": rerun_command(report.target, f"{result.id} and {result.tool}"),
        },
    }
    if mark is not None and mark.status == STALE:
        entry.update(
            kind="pass",
            level="none",
            baselineState="absent",
            message={"text": f"Baselined finding no longer found on {result.tool}: {mark.reason}"},
        )
    elif mark is not None and mark.status == ACCEPTED:
        entry["suppressions"] = [{"kind": "external", "status": "accepted", "justification": mark.reason}]
        entry["baselineState"] = "unchanged"
    elif report.baseline is not None:
        entry["baselineState"] = "new"
    return entry


def _control_rule_id(control: ControlResult) -> str:
    return f"control-{control.name}"


def _control_rule(control: ControlResult) -> dict[str, Any]:
    if control.name == UNASKED:
        short, help_text = (
            "A tool that acts must ask first",
            f"The tool acted on its first call: {UNASKED_REMEDY}.",
        )
    elif control.name == "unanswered":
        # It fails when the call acted, or when it never ended: the rule says both, a result says which.
        short = "A call nobody answers must end with a refusal within its bound, and never act"
        help_text = (
            f"A call nobody answered acted, or was still waiting past its bound: {STILL_WAITING_REMEDY}."
        )
    else:
        short = f"The honest-flow control '{control.name}' must not act"
        help_text = "A decline, a cancel or an accepted answer that says no must never act."
    return {
        "id": _control_rule_id(control),
        "name": control.name,
        "shortDescription": {"text": short},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["security", "control"], "security-severity": _SECURITY_SEVERITY["high"]},
    }


def _approve_rule() -> dict[str, Any]:
    return {
        "id": "control-approve",
        "name": "approve",
        "shortDescription": {"text": "The honest flow must work, or nothing can be judged"},
        "help": {
            "text": "Not audited: approving the tool's confirmation did not act, so no attack could be judged. "
            "Make approve work (the result's message says what failed and what to give the profile) and audit again.",
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {
            "tags": ["security", "control", "not-audited"],
            "security-severity": _SECURITY_SEVERITY["high"],
        },
    }


def _approve_result(report: AuditReport, control: ControlResult, rule_index: int) -> dict[str, Any]:
    return {
        "ruleId": "control-approve",
        "ruleIndex": rule_index,
        # "open": the tool could not tell whether the target passes or fails.
        "kind": "open",
        "level": "error",
        "message": {
            "text": f"Not audited: the honest flow failed on {control.tool} ({control.detail}); "
            "no attack on it could be judged"
        },
        "locations": _locations(report, control.tool),
        "partialFingerprints": {FINGERPRINT: f"control-approve:{control.tool}"},
        "properties": {"reproduce": rerun_command(report.target, f"control-approve and {control.tool}")},
    }


def _control_result(report: AuditReport, control: ControlResult, rule_index: int) -> dict[str, Any]:
    return {
        "ruleId": _control_rule_id(control),
        "ruleIndex": rule_index,
        "kind": "fail",
        "level": "error",
        "message": {"text": f"Control {control.name} failed on {control.tool}: {control.detail}"},
        "locations": _locations(report, control.tool),
        "partialFingerprints": {FINGERPRINT: f"{_control_rule_id(control)}:{control.tool}"},
        "properties": {
            "reproduce": rerun_command(report.target, f"control-{control.name} and {control.tool}")
        },
    }


# The lists a rule's ids belong to, as SARIF taxonomies (code scanning shows a rule's tags;
# a taxonomy keeps the ids, their titles and where they are published in the file itself).
_OWASP_LIST = {"ASI": "OWASP Top 10 for Agentic Applications", "MCP": "OWASP MCP Top 10"}
_REQUIREMENT_LIST = {"AISVS": "OWASP AISVS", "ADA": "ADA AI Tool Specification"}
_LIST_SOURCES = {
    "OWASP Top 10 for Agentic Applications": "https://genai.owasp.org/resource/owasp-top-10-for-agentic-applications-for-2026/",
    "OWASP MCP Top 10": "https://github.com/OWASP/www-project-mcp-top-10",
    "OWASP AISVS": "https://github.com/OWASP/AISVS/blob/main/1.0/en/0x10-C10-MCP-Security.md",
    "ADA AI Tool Specification": "https://github.com/appdefensealliance/ASA-WG/blob/main/AI%20Profile/AI%20Tool%20Specification.md",
}


def _list_of(item: str) -> str:
    return _OWASP_LIST.get(item[:3]) or _REQUIREMENT_LIST[item.split("-")[0]]


def _relationship(item: str, taxonomy: str) -> dict[str, Any]:
    return {"target": {"id": item, "toolComponent": {"name": taxonomy}}, "kinds": ["relevant"]}


def _taxonomies() -> list[dict[str, Any]]:
    items = {**OWASP_ITEMS, **REQUIREMENT_ITEMS}
    lists: dict[str, list[dict[str, Any]]] = {name: [] for name in _LIST_SOURCES}
    for item, title in items.items():
        lists[_list_of(item)].append({"id": item, "name": title, "shortDescription": {"text": title}})
    return [
        {"name": name, "informationUri": _LIST_SOURCES[name], "taxa": taxa} for name, taxa in lists.items()
    ]
