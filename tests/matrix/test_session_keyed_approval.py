"""An approval staged under the agent's own session id, carried to another action (cmd-line-mcp 0.6.1, trial B).

cmd-line-mcp's `execute_command(command, session_id)` answers a write `requires_approval` with the
session's id; `approve_command_type(write, session_id, remember=True)` approves every write of that
session, and `execute_command` then runs any write sent with it: `rm b.txt`, never staged, ran after
`rm a.txt` was approved. token-cross-target said "not applicable: the approval names only its action",
reasoning that a pending id names one action; but the redemption here is the gated call sent again, with
the action's own arguments beside an id the agent chose, so another action's arguments can go with it.

The confirm-kinds server's `--pending-key session` is that shape: careful (the approval is bound to the
session's request, its exact tool and path) and with `session-wide-approval` (the session's approval lets
any call with it act once, on whatever it names). A pending flow redeemed by `execute_pending(pending_id)`
sends only the id: there it stays not applicable, saying so.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.techniques import ANY, traits

TARGETS = Path(__file__).resolve().parents[2] / "targets"
KINDS_SERVER = TARGETS / "confirm_kinds" / "server.py"
APPROVE_CLI = TARGETS / "confirm_kinds" / "approve_cli.py"
# Every family that judges any mechanism, and what the person reads.
FAMILIES = {n for n, t in traits().items() if t.mechanisms == ANY} | {"prompt-forging"}
SESSION = "agent-session"


def _person(decision: str) -> dict[str, object]:
    return {"command": f"{sys.executable} {APPROVE_CLI} --inbox {{root}}/../approvals {{id}} {decision}"}


def _session_profile(*flaws: str) -> dict[str, Any]:
    return {
        "command": f"py:{KINDS_SERVER}:build_server",
        "factory_args": {
            "mechanism": "pending",
            "pending_key": "session",
            "pending_redeem": "again",
            "flaws": list(flaws),
        },
        "tool": "delete_file",
        # The session is the agent's own choice, the same on every call (cmd-line-mcp's session_id).
        "args": {"path": "{path}", "session_id": SESSION},
        "call_timeout": 10.0,
        "confirmation": {
            "kind": "pending",
            "pending": {
                "id_from": "session_id",
                "human": [{**_person("show"), "shows": True}, _person("approved")],
                "decline": [_person("declined")],
                # No args: the gated call again, with its own arguments (the session among them).
                "execute": {"tool": "delete_file"},
            },
        },
    }


def audit(catalogue: Catalogue, raw: dict[str, Any], families: set[str] = FAMILIES) -> AuditRun:
    def select(spec: AttackSpec) -> bool:
        return spec.family in families

    profile = profile_from_mapping(raw, source="test")
    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def _found(run: AuditRun) -> dict[str, Verdict]:
    return {r.id: r.verdict for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}


def test_a_session_approval_bound_to_its_request_refuses_another_action_sent_with_the_session(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, _session_profile())
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    assert _found(run) == {}, _found(run)
    carried = next(r for r in run.results if r.id == "MCA-TOKOTHER-001")
    # Tried, not set aside: the victim's call with the decoy's approved session is refused by the server.
    assert carried.verdict is Verdict.REFUSED, carried
    assert carried.layer is Layer.TOOL, carried


def test_an_approval_of_the_whole_session_lets_another_action_act_and_is_found(catalogue: Catalogue) -> None:
    run = audit(catalogue, _session_profile("session-wide-approval"))
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    # The decoy staged and approved under the session; the victim, never staged, deleted with it.
    assert _found(run) == {"MCA-TOKOTHER-001": Verdict.VULNERABLE}, _found(run)


def test_a_pending_id_redeemed_by_execute_pending_alone_names_no_action_to_swap(catalogue: Catalogue) -> None:
    raw = {
        "command": f"py:{KINDS_SERVER}:build_server",
        "factory_args": {"mechanism": "pending"},
        "tool": "delete_file",
        "call_timeout": 10.0,
        "confirmation": {
            "kind": "pending",
            "pending": {
                "id_from": "pending_id",
                "human": [_person("approved")],
                "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
            },
        },
    }
    run = audit(catalogue, raw, families={"token-cross-target"})
    carried = next(r for r in run.results if r.id == "MCA-TOKOTHER-001")
    assert carried.verdict is Verdict.NOT_APPLICABLE, carried
    assert "the call that redeems the approval sends only its id" in carried.reason, carried.reason
