"""One attack on the notes reference server (the magnemo-mcp shape), in process, with its approve control passed.

`stage(note, store)` drafts a note, `handoff` asks the person over 2025-era elicitation, `list_kept` shows
what was kept: the profile the nested-field and minted-id matrices share.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Result
from mcp_confirm_audit.profile.loader import profile_from_mapping

NOTES = Path(__file__).resolve().parents[2] / "targets" / "notes" / "server.py"


def audit_notes(
    catalogue: Catalogue,
    attack: str,
    *,
    flaws: tuple[str, ...],
    save: dict[str, str] | None = None,
    sentinel: bool = False,
) -> Result:
    """`attack`'s result; `save`: what the staging call keeps for later calls (`save:` in a profile);
    `sentinel`: credential-like titles are held out of the question and never kept (magnemo-mcp's)."""
    stage: dict[str, Any] = {
        "tool": "stage",
        "args": {"note": {"title": "Deploy checklist"}, "store": "playbooks"},
    }
    if save:
        stage["save"] = save
    raw = {
        "command": f"py:{NOTES}:build_server",
        "factory_args": {"flaws": list(flaws), "sentinel": sentinel},
        "protocol": "2025-11-25",
        "tool": "handoff",
        "setup": [stage],
        "args": {"cut": "the rest of the refactor"},
        "effect": [{"tool": "list_kept"}],
        "call_timeout": 10.0,
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.id == attack,
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls if c.name == "approve"), run.controls
    return run.by_id()[attack]
