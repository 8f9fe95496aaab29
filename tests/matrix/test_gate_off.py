"""A gate its server's own setting leaves off: the staging call acts, and that is acting unasked.

The confirm-kinds pending gate (targets/confirm_kinds, and the robot arm on the same gates) with `gate-off`:
the staging call acts at once, stages nothing and hands out no pending id, as a server started in its
allow-everything mode does. The controls used to say only "the staging call returned no pending id", a
profile mistake, though the file was gone (trial 14, host-terminal-mcp's `--mode allow_all`). What the
staging call moved of the action's own subject (the file it names, where the profile says its effect
shows) is the tool acting with no confirmation: the unasked control fails, a finding. A careful server
whose staging call the profile reads wrongly (an `id_from:` naming no field of its reply) lists its staged
move where the effect shows and says it waits: a profile mistake still, never a finding.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import UNASKED, ControlResult
from mcp_confirm_audit.profile.loader import profile_from_mapping

TARGETS = Path(__file__).resolve().parents[2] / "targets"
KINDS_SERVER = TARGETS / "confirm_kinds" / "server.py"
ARM_SERVER = TARGETS / "robot_arm" / "server.py"
APPROVE_CLI = TARGETS / "confirm_kinds" / "approve_cli.py"


def _human(decision: str) -> str:
    return shlex.join([sys.executable, str(APPROVE_CLI), "--inbox", "{root}/../approvals", "{id}", decision])


def _controls(
    catalogue: Catalogue, server: Path, *flaws: str, id_from: str = "pending_id", **settings: Any
) -> dict[str, ControlResult]:
    """The controls alone: no attack is run (each would be inconclusive where the approve control fails)."""
    raw = {
        "command": f"py:{server}:build_server",
        "factory_args": {"mechanism": "pending", "flaws": list(flaws)},
        "tool": "move_joint" if server == ARM_SERVER else "delete_file",
        "call_timeout": 10.0,
        "confirmation": {
            "kind": "pending",
            "pending": {
                "id_from": id_from,
                "human": {"command": _human("approved"), "decline": _human("declined")},
                "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
            },
        },
        **settings,
    }
    profile = profile_from_mapping(raw, source="test")
    run: AuditRun = run_audit(profile, catalogue=catalogue, select=lambda spec: False)
    return {c.name: c for c in run.controls}


@pytest.mark.parametrize("flawed", [False, True], ids=["careful", "gate-off"])
def test_a_staging_call_that_deletes_the_file_it_names_acted_without_asking(
    catalogue: Catalogue, flawed: bool
) -> None:
    controls = _controls(catalogue, KINDS_SERVER, *(["gate-off"] if flawed else []))
    if not flawed:
        assert controls["approve"].passed, controls["approve"].detail
        assert UNASKED not in controls, controls
        return
    unasked = controls[UNASKED]
    assert unasked.finding, unasked
    assert "the file it names" in unasked.detail, unasked.detail
    assert "no pending id" not in controls["approve"].detail, controls["approve"].detail


# Where the profile says the arm's move shows: the read-only arm_status.
ARM_STATUS = {"effect": [{"tool": "arm_status"}]}


@pytest.mark.parametrize("flawed", [False, True], ids=["careful", "gate-off"])
def test_a_staging_call_that_moves_the_arm_where_its_effect_shows_acted_without_asking(
    catalogue: Catalogue, flawed: bool
) -> None:
    controls = _controls(catalogue, ARM_SERVER, *(["gate-off"] if flawed else []), **ARM_STATUS)
    if not flawed:
        assert controls["approve"].passed, controls["approve"].detail
        assert UNASKED not in controls, controls
        return
    unasked = controls[UNASKED]
    assert unasked.finding, unasked
    assert "tool:arm_status" in unasked.detail, unasked.detail


def test_a_careful_staging_call_read_with_the_wrong_id_field_is_a_profile_mistake_never_a_finding(
    catalogue: Catalogue,
) -> None:
    # The move is staged (listed as waiting in arm_status, where the profile says the effect shows), and the
    # reply says it waits for approval; the profile names a field the reply does not have.
    controls = _controls(catalogue, ARM_SERVER, id_from="request_id", **ARM_STATUS)
    approve = controls["approve"]
    assert not approve.passed
    assert "returned no pending id" in approve.detail, approve.detail
    assert "tool:arm_status.waiting" in approve.detail, approve.detail
    assert not any(c.finding for c in controls.values()), controls
