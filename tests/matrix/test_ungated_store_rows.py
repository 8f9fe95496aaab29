"""A store the target keeps in one JSON file in its root: another tool's change is judged row by row.

targets/inventory/server.py: a gated deletion asked over elicitation/create, and no tool
that shows the store, only the file (the profile names the tool and its subject, nothing
about the effect, which the controls learn). Read as a whole, the store is "rewritten" by a deletion and by an
addition alike, and an addition made without asking was called the gated harm itself
(stocktrim-mcp-server 0.17.0 behind a fake API keeping its rows in the root: an ungated
create_product read as delete_product's effect). Read by rows from the approve control on,
a rename is another change at the gated place (weak), and only the gated kind of
change, rows removed, done around the gate is vulnerable.

With an audit log every call that reaches the store appends to (sendgrid-mcp-secure's), a
save's log line was "the gated action's own effect" beside the deletion's: the controls learn
the log as bookkeeping from a call about an item that does not exist, refused, which wrote it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Result, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

INVENTORY = Path(__file__).resolve().parents[2] / "targets" / "inventory" / "server.py"
UNGATED = "MCA-UNGATED-001"


@pytest.mark.parametrize(
    ("flaw", "verdict", "said", "audit_log"),
    [
        # The item renamed unasked: the store changed where the deletion shows, but no row went.
        ("save-unasked", Verdict.WEAK, "where the gated action's effect shows", False),
        # Every item removed unasked: the deletion itself, around the gate.
        ("clear-unasked", Verdict.VULNERABLE, "own effect: removed file:inventory.json.items[*]", False),
        (None, Verdict.REFUSED, "nothing moved where the gated action's effect shows", False),
        # With the log, the rename's log line is not the gated effect; the deletion around the gate still is.
        ("save-unasked", Verdict.WEAK, "where the gated action's effect shows", True),
        ("clear-unasked", Verdict.VULNERABLE, "own effect: removed file:inventory.json.items[*]", True),
    ],
)
def test_another_tool_s_change_of_a_json_store_in_the_root_is_judged_by_its_rows(
    catalogue: Catalogue, flaw: str | None, verdict: Verdict, said: str, audit_log: bool
) -> None:
    result = _ungated(catalogue, {"flaws": [flaw] if flaw else [], "audit_log": audit_log})
    assert result.verdict is verdict, (result.reason, result.evidence)
    assert said in result.reason, result.reason
    if audit_log:
        assert "audit.jsonl" not in result.reason, result.reason


@pytest.mark.parametrize("flaw", [None, "save-unasked"])
def test_a_note_written_unasked_into_the_same_store_is_not_where_the_deletion_shows(
    catalogue: Catalogue, flaw: str | None
) -> None:
    """The store's file is rewritten by the note, no item row moves: read by rows, nothing of the gate's.

    finamatik-ops-mcp 0.1.1: add_note writes the notes table of the ops.db whose orders a declared
    query reads; the database's bytes changing was reported as "where the gated action's effect shows".
    The rename beside it (save-unasked) is still a change of an item row, the gated place.
    """
    result = _ungated(catalogue, {"flaws": [flaw] if flaw else [], "notes": True})
    noted = [line for line in result.evidence if line.startswith("[attack] add_note")]
    assert noted, result.evidence
    assert "complete" in noted[0], noted
    if flaw is None:
        assert result.verdict is Verdict.REFUSED, (result.reason, result.evidence)
        assert "nothing moved where the gated action's effect shows" in result.reason, result.reason
    else:
        assert result.verdict is Verdict.WEAK, (result.reason, result.evidence)
        assert "changed file:inventory.json.items[*].name" in result.reason, result.reason


def _ungated(catalogue: Catalogue, factory_args: dict[str, object]) -> Result:
    raw = {
        "command": f"py:{INVENTORY}:build_server",
        "factory_args": factory_args,
        "tool": "delete_item",
        "args": {"sku": "WIDGET-001"},
        # Every use deletes the same item: each attack gets the store as the server seeds it.
        "isolation": "process",
        "protocol": "2025-11-25",
        "call_timeout": 10.0,
    }
    profile = profile_from_mapping(raw, source="test")
    run = run_audit(profile, catalogue=catalogue, select=lambda spec: spec.family == "ungated")
    approve = next(c for c in run.controls if c.tool == "delete_item" and c.name == "approve")
    assert approve.passed, run.controls
    if factory_args.get("audit_log"):
        learned = next(c for c in run.controls if c.tool == "delete_item" and c.name == "bookkeeping")
        assert "audit.jsonl: changed on a call about a subject that does not exist" in learned.detail
    return next(r for r in run.results if r.tool == "delete_item" and r.id == UNGATED)
