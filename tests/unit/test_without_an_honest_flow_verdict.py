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


# A proxy's log of calls in the root, beside the case the attack acts on.
IN_A_CASE = TreeSnapshot(
    {
        "root/005-case/victim.txt": FileIdentity("file", 1, 10, 5, 100),
        "root/.gate/journal.jsonl": FileIdentity("file", 2, 10, 5, 100),
    }
)
LOG_GREW = TreeSnapshot(
    {
        "root/005-case/victim.txt": FileIdentity("file", 1, 10, 5, 100),
        "root/.gate/journal.jsonl": FileIdentity("file", 2, 10, 9, 200),
    }
)
NOBODY_ANSWERS = attack_spec("unanswered", id="MCA-NOANSWER-001", severity="medium")


def _nobody_answered(after: TreeSnapshot) -> Transcript:
    """unanswered's call with nobody answering, on an action that names its case's file."""
    return Transcript(
        "MCA-NOANSWER-001",
        "delete_file",
        FAILED,
        (CALL,),
        IN_A_CASE,
        after,
        effect_verdict=(Verdict.VULNERABLE, "acted though nobody answered its person"),
        case_dir="root/005-case",
        only_the_case_counts=True,
    )


def test_a_log_that_grew_beside_the_case_is_not_the_actions_doing() -> None:
    result = judge(NOBODY_ANSWERS, _nobody_answered(LOG_GREW))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "root/.gate/journal.jsonl" in result.reason
    assert "none of the action's own subject" in result.reason


def test_the_cases_own_file_gone_is_the_actions_doing_beside_a_log_that_grew() -> None:
    gone = TreeSnapshot({"root/.gate/journal.jsonl": LOG_GREW.entries["root/.gate/journal.jsonl"]})
    result = judge(NOBODY_ANSWERS, _nobody_answered(gone))
    assert result.verdict is Verdict.VULNERABLE
    assert result.reason.endswith(": root/005-case/victim.txt")


def test_a_row_gone_from_a_shared_store_is_the_actions_doing_where_the_family_did_not_narrow_it() -> None:
    # prune_row's switch (zc-shapes switch-acts): its subject is a row of a file every use shares.
    table = FileIdentity("file", 3, 10, 5, 100)
    transcript = Transcript(
        "MCA-FLAGBYPASS-001",
        "prune_row",
        FAILED,
        (CALL,),
        TreeSnapshot({"root/rows.json": table}),
        TreeSnapshot({"root/rows.json": FileIdentity("file", 3, 10, 9, 80)}),
        effect_verdict=ONLY_GATE,
        case_dir="root/005-case",
    )
    assert judge(SPEC, transcript).verdict is Verdict.VULNERABLE
