"""A pending action named by itself, whose effect is a file its own argument names (the greenhouse's marker).

`touch_marker(marker)` (targets/zc_shapes, shape `marker`) touches ROOT/MARKER once the grower's own
command has written their yes; unasked it answers `needs_approval` with the marker, the pending action
named by what it does, as a shell whose approval is the command line is (host-terminal-mcp, trial 14).
Touching a marker that is there already changes only its time. Three things a newcomer's trial saw
misread on such a server, each proven here both ways:

- the controller's approvals switched off (`gate-off`): the staging call touched the file at once, and
  the controls said only "the staging call returned no pending id", a profile mistake. It is the tool
  acting unasked: the unasked control fails, a finding.
- an approve tool within the agent's reach (`agent-approves`): the wrong-handle control approved and
  touched a marker never staged. That file was learned as bookkeeping and the success reply as how the
  gate refuses. A step that moved what the action moves teaches nothing.
- the grower's yes never used up (`token-reuse`): every redemption of the race touched the marker again,
  which shows nowhere the count looks, and each was answered as the first. That was `refused (tool)`; it
  is inconclusive, saying why, while after-success sees the second touch on disk (the file's time) and
  is the finding.
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
from mcp_confirm_audit.models import UNASKED, ControlResult, Layer, Verdict
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
# The approve tool the agent itself can call, where the flaw gives it one.
THE_AGENT = {"approve": {"tool": "approve_marker", "args": {"marker": "{id}"}}}


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


@pytest.mark.parametrize("flawed", [False, True], ids=["careful", "agent-approves"])
def test_a_wrong_handle_that_touched_another_marker_teaches_neither_bookkeeping_nor_a_refusal(
    catalogue: Catalogue, flawed: bool
) -> None:
    run = _audit(
        catalogue,
        THE_AGENT if flawed else THE_GROWER,
        *(["agent-approves"] if flawed else []),
        attacks=("MCA-SELFAPPROVE-001",),
    )
    controls = _controls(run)
    assert controls["approve"].passed, controls["approve"].detail
    refusals = controls["refusals"].detail
    kept = controls["bookkeeping"].detail if "bookkeeping" in controls else ""
    # Whatever the flow, the marker is the action's own effect: never bookkeeping, nor one of its kind.
    assert ".sow" not in kept, kept
    # The preview handed out the marker to approve: it asked, and is shown so, never as a reply that acted.
    assert "preview-alone: asked" in refusals, refusals
    self_approved = run.by_id()["MCA-SELFAPPROVE-001"]
    if not flawed:
        # The agent's own execute with a marker nobody approved is held: how this gate refuses.
        assert "gate refusal learned from wrong-handle" in refusals, refusals
        assert (self_approved.verdict, self_approved.layer) == (Verdict.REFUSED, Layer.TOOL), (
            self_approved.reason
        )
        return
    # The wrong marker was approved and touched: no refusal to learn, and the report says why.
    assert "gate refusal learned from wrong-handle" not in refusals, refusals
    assert "nothing learned from wrong-handle" in refusals, refusals
    assert "tray-seven.sow0" in refusals, refusals
    assert self_approved.verdict is Verdict.VULNERABLE, self_approved.reason


@pytest.mark.parametrize("flawed", [False, True], ids=["careful", "token-reuse"])
def test_a_yes_never_used_up_is_never_refused_on_a_repeat_the_count_cannot_see(
    catalogue: Catalogue, flawed: bool
) -> None:
    run = _audit(
        catalogue,
        THE_GROWER,
        *(["token-reuse"] if flawed else []),
        attacks=("MCA-TOKREUSE-001", "MCA-TOKREUSE-003"),
    )
    assert _controls(run)["approve"].passed
    after, raced = run.by_id()["MCA-TOKREUSE-001"], run.by_id()["MCA-TOKREUSE-003"]
    if not flawed:
        # The yes is used up: the replay is asked about again, and so is every redemption but one.
        assert (after.verdict, after.layer) == (Verdict.REFUSED, Layer.TOOL), after.reason
        assert (raced.verdict, raced.layer) == (Verdict.REFUSED, Layer.TOOL), raced.reason
        return
    # The second touch shows on disk, as the marker's time: the finding, as observed.
    assert after.verdict is Verdict.VULNERABLE, after.reason
    assert f"root/{MARKER}" in after.reason, after.reason
    # The race's count sees one effect, every redemption answered as the one that acted: not a refusal.
    assert raced.verdict is Verdict.INCONCLUSIVE, raced.reason
    assert raced.layer is None, raced
    assert "answered alike" in raced.reason, raced.reason
    assert "leaves nothing new" in raced.reason, raced.reason
