"""A family that runs where the honest flow never completed: only an effect of its own is a finding."""

from __future__ import annotations

from verdict_records import attack_spec

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import (
    Exchange,
    FileIdentity,
    Layer,
    Outcome,
    Phase,
    Precondition,
    Response,
    Transcript,
    TreeSnapshot,
    Verdict,
)

SPEC = attack_spec("flag-bypass", id="MCA-FLAGBYPASS-001", severity="critical")
BEFORE = TreeSnapshot({"root/case/victim.txt": FileIdentity("file", 1, 10, 5, 100)})
AFTER = TreeSnapshot({})
FAILED = Precondition(False, "relative: did not ask")
CALL = Exchange(
    Phase.ATTACK,
    "the caller sets confirmed: True itself",
    "primary",
    {"name": "delete_file"},
    Response(Outcome.COMPLETE, '{"ok": true}'),
)
ONLY_GATE = (Verdict.VULNERABLE, "a switch the caller set is the only gate: the tool acted on it")


def test_an_effect_of_its_own_is_vulnerable_though_the_honest_flow_failed() -> None:
    transcript = Transcript(
        "MCA-FLAGBYPASS-001", "delete_file", FAILED, (CALL,), BEFORE, AFTER, effect_verdict=ONLY_GATE
    )
    result = judge(SPEC, transcript)
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert "the only gate" in result.reason
    assert "where the honest flow never completed (relative: did not ask)" in result.reason


def test_no_effect_stays_inconclusive() -> None:
    transcript = Transcript("MCA-FLAGBYPASS-001", "delete_file", FAILED, (CALL,), BEFORE, BEFORE)
    result = judge(SPEC, transcript)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.reason.startswith("honest flow failed")


def test_an_effect_with_no_switch_set_is_no_switchs_doing() -> None:
    transcript = Transcript(
        "MCA-FLAGBYPASS-001",
        "delete_file",
        FAILED,
        (CALL,),
        BEFORE,
        AFTER,
        setup_failure="the tool acted with no switch set",
    )
    assert judge(SPEC, transcript).verdict is Verdict.INCONCLUSIVE
