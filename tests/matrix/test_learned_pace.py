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

from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.pace import LADDER
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

LEGACY_SERVER = Path(__file__).resolve().parents[2] / "targets" / "legacy" / "server.py"
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
