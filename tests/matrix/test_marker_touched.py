"""A pending action named by itself, whose effect is a file its own argument names (the greenhouse's marker).

`touch_marker(marker)` (targets/zc_shapes, shape `marker`) touches ROOT/MARKER once the grower's own
command has written their yes; unasked it answers `needs_approval` with the marker, the pending action
named by what it does, as a shell whose approval is the command line is (host-terminal-mcp, trial 14).
Touching a marker that is there already changes only its time. What a newcomer's trial saw
misread on such a server, proven here both ways:

- the controller's approvals switched off (`gate-off`): the staging call touched the file at once, and
  the controls said only "the staging call returned no pending id", a profile mistake. It is the tool
  acting unasked: the unasked control fails, a finding.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import UNASKED, ControlResult
from mcp_confirm_audit.profile.loader import profile_from_mapping

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"
MARKER = "tray-seven.sown"
# The grower's own channel: their yes, a file named for the marker their command writes.
GROWER_SAYS_YES = shlex.join(
    [
        sys.executable,
        "-c",
        "import pathlib, sys; p = pathlib.Path(sys.argv[1]); p.parent.mkdir(exist_ok=True); p.touch()",
        "{root}/.yes/{id}",
    ]
)
THE_GROWER = {"human": {"command": GROWER_SAYS_YES}}


def _audit(catalogue: Catalogue, who: dict[str, Any], *flaws: str, attacks: tuple[str, ...] = ()) -> AuditRun:
    raw = {
        "command": f"py:{SHAPES}:build_server",
        "factory_args": {"shape": "marker", "flaws": list(flaws)},
        "tool": "touch_marker",
        "args": {"marker": MARKER},
        "ignore": [".yes", ".yes/**"],
        "confirmation": {
            "kind": "pending",
            "pending": {
                "id_from": "marker",
                **who,
                "execute": {"tool": "touch_marker", "args": {"marker": "{id}"}},
            },
        },
        "call_timeout": 10.0,
        # A yes the flawed greenhouse never uses up stays for whatever follows in the same world: each
        # control and attack gets a fresh one, as for a shell whose approvals last its session.
        "isolation": "process",
    }
    return run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.id in attacks,
        generation=MATRIX_GENERATION,
    )


def _controls(run: AuditRun) -> dict[str, ControlResult]:
    return {c.name: c for c in run.controls}


@pytest.mark.parametrize("flawed", [False, True], ids=["careful", "gate-off"])
def test_a_staging_call_that_touches_the_marker_at_once_acted_without_asking(
    catalogue: Catalogue, flawed: bool
) -> None:
    run = _audit(catalogue, THE_GROWER, *(["gate-off"] if flawed else []))
    controls = _controls(run)
    if not flawed:
        assert controls["approve"].passed, controls["approve"].detail
        assert UNASKED not in controls, controls
        assert controls["preview-alone"].passed, controls["preview-alone"].detail
        return
    # Not a profile mistake: the file its own argument names was made by the call that should only stage.
    unasked = controls[UNASKED]
    assert unasked.finding, unasked
    assert "acted without asking" in unasked.detail, unasked.detail
    assert f"root/{MARKER}" in unasked.detail, unasked.detail
    approve = controls["approve"]
    assert not approve.passed
    assert "no pending id" not in approve.detail, approve.detail
    assert "took effect with no approval" in approve.detail, approve.detail
