"""No read-only probe is called while the person's question is open: proven on a server that serves one request at a time.

As on magnemo-mcp 0.6.10, whose ask loop handles one request at a time: a probe sent
between the question (2025-era elicitation/create) and the answer waited until the server's
own wait for the person ran out, so the answer came after the question was withdrawn and the
honest flow failed ("asked; no answer (timeout)"): every attack inconclusive. The probes now
look before the asking call and once the round is complete, never while it is open: on the
notes server with `serial`, the controls pass, a decline is refused by the tool, and a tool
that keeps a staged note unasked is still seen to act (the look after the round).
"""

from __future__ import annotations

from pathlib import Path

from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

NOTES = Path(__file__).resolve().parents[2] / "targets" / "notes" / "server.py"
DECLINE, UNGATED = "MCA-CONSENT-001", "MCA-UNGATED-001"


def test_a_server_that_serves_one_request_at_a_time_while_asking_is_audited(catalogue: Catalogue) -> None:
    raw = {
        "command": f"py:{NOTES}:build_server",
        "factory_args": {"flaws": ["keeps-unasked"], "serial": True},
        "protocol": "2025-11-25",
        "tool": "handoff",
        "setup": [
            {
                "tool": "stage",
                "args": {"note": {"title": "Deploy checklist"}, "store": "playbooks"},
                "save": {"note": "staged"},
            }
        ],
        "args": {"cut": "the rest of the refactor"},
        "effect": [{"tool": "list_kept"}],
        "call_timeout": 10.0,
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.id in (DECLINE, UNGATED),
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls), run.controls
    declined, ungated = run.by_id()[DECLINE], run.by_id()[UNGATED]
    assert (declined.verdict, declined.layer) == (Verdict.REFUSED, Layer.TOOL), declined.reason
    assert "the person said no" in declined.reason, declined.reason
    assert "no answer (timeout)" not in " ".join(declined.evidence), declined.evidence
    assert ungated.verdict is Verdict.VULNERABLE, (ungated.reason, ungated.evidence)
