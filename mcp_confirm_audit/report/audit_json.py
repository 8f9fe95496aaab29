"""`audit.json`: the machine-readable report, versioned by `schema_version`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .. import __version__
from ..models import ControlResult, Result

SCHEMA_VERSION = 1


class AuditJson:
    filename = "audit.json"

    def render(self, results: Sequence[Result], controls: Sequence[ControlResult], target: Mapping[str, Any]) -> str:
        document = {
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "mcp-confirm-audit", "version": __version__},
            "generated": datetime.now(UTC).isoformat(timespec="seconds"),
            "target": dict(target),
            "controls": [c.as_dict() for c in sorted(controls, key=lambda c: (c.tool, c.name))],
            "results": [r.as_dict() for r in results],
        }
        return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
