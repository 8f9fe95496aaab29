"""Zero configuration on a target that refuses a yes sent faster than a person reads (engine/pace).

The legacy reference server with `too_fast` refuses an answer sooner than that after its question, in
either era, as PyPI magnemo-mcp refuses one inside 300 ms. No profile sets `answer_after`: the approve
control's yes goes at once and is refused, so the control runs again at the ladder's paces (0.5 s, then
2 s; the target's rule, never scaled) and keeps the first that passes for the tool's attacks. The bound
is below the first pace or above the last, so no verdict rests on how fast the machine runs; the tests
assert verdicts and the learned fact, never timings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.connection_key import PRIMARY
from mcp_confirm_audit.engine.controls import run_controls
from mcp_confirm_audit.engine.pace import LADDER
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.engine.world import Stats, World
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.target.discovery import look_around, plan_tools

LEGACY_SERVER = Path(__file__).resolve().parents[2] / "targets" / "legacy" / "server.py"
NOTES = LEGACY_SERVER.parents[1] / "notes" / "server.py"
# Two families, a few attacks each: consent (the person's answer) and identity-swap (the file after it).
ATTACKS = ("MCA-CONSENT-001", "MCA-CONSENT-002", "MCA-CONSENT-003", "MCA-IDSWAP-001")
# Below the ladder's first pace, and above its last.
SATISFIED, NEVER = 0.3, LADDER[-1] + 1.0


def zero_configuration(catalogue: Catalogue, too_fast: float, *flaws: str) -> AuditRun:
    """The command alone (in process): no tool, no arguments, no answer_after."""
    raw = {
        "command": f"py:{LEGACY_SERVER}:build_server",
        "factory_args": {"too_fast": too_fast, "flaws": list(flaws), "answer_timeout": 10.0},
    }
    return run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.id in ATTACKS,
        generation=MATRIX_GENERATION,
    )


def test_the_careful_server_is_answered_at_the_learned_pace_and_refuses_every_attack(
    catalogue: Catalogue,
) -> None:
    run = zero_configuration(catalogue, SATISFIED)
    controls = {c.name: c for c in run.controls}
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    assert controls["approve"].detail.endswith(f"(answered {LADDER[0]:g} s after the question)")
    learned = controls["pace"].detail
    assert learned.startswith("the target refuses an answer sooner than a person reads"), learned
    assert "faster than a person reads it" in learned, learned  # the target's own words, quoted
    assert f"every answer on delete_file waits {LADDER[0]:g} s after its question" in learned, learned
    results = run.by_id()
    assert {r.mechanism for r in run.results} == {"elicitation"}
    assert {i: (r.verdict, r.layer) for i, r in results.items()} == dict.fromkeys(
        ATTACKS, (Verdict.REFUSED, Layer.TOOL)
    ), {i: r.reason for i, r in results.items()}
    # Each refusal is the gate's, answered at the person's pace: none is the target refusing a hurried yes.
    hurried = [i for i, r in results.items() if "faster than a person" in " ".join((r.reason, *r.evidence))]
    assert hurried == []


def test_a_flaw_is_still_found_under_the_learned_pace(catalogue: Catalogue) -> None:
    run = zero_configuration(catalogue, SATISFIED, "decline-as-accept", "no-identity-check")
    assert any(c.name == "pace" and c.passed for c in run.controls), run.controls
    verdicts = {i: r.verdict for i, r in run.by_id().items()}
    assert verdicts == {
        "MCA-CONSENT-001": Verdict.VULNERABLE,
        "MCA-CONSENT-002": Verdict.VULNERABLE,
        "MCA-CONSENT-003": Verdict.REFUSED,
        "MCA-IDSWAP-001": Verdict.VULNERABLE,
    }, {i: r.reason for i, r in run.by_id().items()}


def test_a_pace_no_step_of_the_ladder_satisfies_fails_the_control_as_before(catalogue: Catalogue) -> None:
    run = zero_configuration(catalogue, NEVER)
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed
    # Today's line (the target's words, the key that sets the pace), and the paces tried after it.
    assert "faster than a person reads it; nothing was deleted" in approve.detail, approve.detail
    assert "answer_after: SECONDS" in approve.detail, approve.detail
    paces = " and ".join(f"{s:g} s" for s in LADDER)
    assert f"answered again {paces} after the question, the yes was refused as well" in approve.detail
    assert not any(c.name == "pace" for c in run.controls)
    assert {r.verdict for r in run.results} == {Verdict.INCONCLUSIVE}


# The magnemo-mcp shape: notes already wait when the server starts, `handoff` asks about them over
# 2025-era elicitation and refuses a yes inside 0.3 s; once they are kept, nothing waits and it asks no more.
MAGNEMO_SHAPE: dict[str, Any] = {
    "command": f"py:{NOTES}:build_server",
    "factory_args": {"too_fast": SATISFIED, "already_staged": ["Deploy checklist"], "answer_timeout": 10.0},
    "protocol": "2025-11-25",
    "tool": "handoff",
    "args": {"cut": "the rest of the refactor"},
    "effect": [{"tool": "list_kept"}],
    "call_timeout": 10.0,
}


def test_the_magnemo_shape_is_judged_at_the_learned_pace_each_control_in_a_world_that_asks(
    catalogue: Catalogue,
) -> None:
    # No answer_after: the pace is learned. The refusal controls find nothing waiting where the
    # approval kept it all, and are judged in a fresh target process (isolation chosen), as attacks are.
    run = run_audit(
        profile_from_mapping(MAGNEMO_SHAPE, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.id in ("MCA-CONSENT-001", "MCA-CONSENT-003"),
        generation=MATRIX_GENERATION,
    )
    controls = {c.name: c for c in run.controls}
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    assert {"pace", "isolation"} <= controls.keys(), run.controls
    assert "answered too fast to be a person" in controls["pace"].detail, controls["pace"].detail
    for name in ("decline", "cancel", "negative"):
        assert controls[name].applicable, controls[name]
    assert {i: (r.verdict, r.layer) for i, r in run.by_id().items()} == {
        "MCA-CONSENT-001": (Verdict.REFUSED, Layer.TOOL),
        "MCA-CONSENT-003": (Verdict.REFUSED, Layer.TOOL),
    }, {i: r.reason for i, r in run.by_id().items()}


def test_a_refusal_control_that_neither_asks_nor_acts_is_not_judged_and_is_no_finding() -> None:
    # The same controls with no fresh world to be had: in the world the approval left nothing waits,
    # so decline, cancel and the accepted "no" neither ask nor act. None is a failed refusal control.
    world = World(profile_from_mapping(MAGNEMO_SHAPE, source="test"), Stats())
    world.begin()
    try:
        primary = world.ensure(PRIMARY)
        assert world.sandbox is not None
        tools = world.call(primary.list_tools)
        seen = world.call(look_around, primary, tools, world.profile)
        plan = next(p for p in plan_tools(tools, world.profile, seen) if p.name == "handoff")
        sandbox = world.sandbox
        outcome = world.call(
            lambda: run_controls(
                plan, primary, sandbox, world.profile.answer, values=world.values, tools=tools
            )
        )
    finally:
        world.close()
    assert outcome.approve_ok, outcome.results
    assert outcome.pace == LADDER[0]
    refusals = {c.name: c for c in outcome.results if c.name in ("decline", "cancel", "negative")}
    assert {n: (c.passed, c.applicable) for n, c in refusals.items()} == dict.fromkeys(
        ("decline", "cancel", "negative"), (True, False)
    ), refusals
    assert all("nothing waiting: nothing to ask" in c.detail for c in refusals.values()), refusals
    # Nothing was learned of how this target refuses, and the verdict is told why: an ordinary reply
    # with nothing moved is then no refusal of the tool's (test_action_verdict.py judges it so).
    assert not outcome.signatures.learned(), outcome.signatures
    assert outcome.signatures.unlearned.startswith("the decline control could not be run"), outcome.signatures
