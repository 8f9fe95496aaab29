"""`audit.json`: the machine-readable report, versioned by `schema_version`.

Its shape is declared by the models of `audit_model`, which generate `audit.schema.json`
beside this module and `schemas/audit.schema.json` (JSON Schema 2020-12); a field is only
ever added under the same version, never renamed or removed.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from typing import Any

from .. import __version__
from ..engine.baseline import ACCEPTED, DRIFT, STALE
from ..models import Verdict
from . import jsontext
from .document import AuditReport, headline

SCHEMA_VERSION = 1


def schema() -> dict[str, Any]:
    """The JSON Schema every audit.json validates against."""
    loaded: dict[str, Any] = json.loads(
        resources.files(__package__).joinpath("audit.schema.json").read_text()
    )
    return loaded


class AuditJson:
    filename = "audit.json"

    def render(self, report: AuditReport) -> str:
        document = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "mcp-confirm-audit", "version": __version__},
            "generated": report.generated.isoformat(timespec="seconds"),
            "target": dict(report.target),
            "summary": _summary(report),
            "scope": dict(report.scope),
            "baseline": _baseline(report),
            "controls": [c.as_dict() for c in report.controls],
            "results": [
                {**r.as_dict(), "baseline": m.as_dict() if report.marks and (m := report.mark(r)) else None}
                for r in report.results
            ],
        }
        return jsontext.dumps(document) + "\n"


def _summary(report: AuditReport) -> dict[str, Any]:
    # Counted as members, named by value: no enum lookup for each result.
    verdicts = Counter([r.verdict for r in report.results])
    layers = Counter([r.layer for r in report.results if r.layer and r.verdict == Verdict.REFUSED])
    return {
        "judged": headline(report),
        "verdicts": {verdict.value: n for verdict, n in sorted(verdicts.items())},
        "refused_by": {layer.value: n for layer, n in sorted(layers.items())},
        # The refusal controls that failed: findings, as review.md and SARIF count them.
        "failed_refusal_controls": len(report.failed_controls),
    }


def _baseline(report: AuditReport) -> dict[str, Any] | None:
    if report.baseline is None:
        return None
    statuses = Counter(m.status for m in report.marks.values())
    return {
        "file": report.baseline,
        "accepted": statuses[ACCEPTED],
        "stale": statuses[STALE] + len(report.unmatched),
        "layer_drift": statuses[DRIFT],
        "unmatched": list(report.unmatched),
    }
