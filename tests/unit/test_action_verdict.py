"""An action that names no file: its effect is what the probes saw change, less the target's bookkeeping."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from test_verdict import DONE, OK, SPEC, TOOL_ERROR, TREE, exchange
from verdict_records import attack_spec

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import FileIdentity, Layer, Signatures, Transcript, TreeSnapshot, Verdict
from mcp_confirm_audit.oracle.effects import UNOBSERVED, WHILE_ASKING
from mcp_confirm_audit.techniques._single_use import SingleUse

NO_PAYMENTS = {"tool:list_payments": {"payments": []}}
ONE_PAYMENT = {"tool:list_payments": {"payments": [{"id": 1, "amount_cents": 500}]}}
LOG_GREW = TreeSnapshot({**TREE.entries, "root/audit.jsonl": FileIdentity("file", 1, 12, 99, 200)})
WITH_LOG = TreeSnapshot({**TREE.entries, "root/audit.jsonl": FileIdentity("file", 1, 12, 10, 100)})


def paid(before: Any, after: Any, **kw: Any) -> Transcript:
    tree_before, tree_after = kw.pop("trees", (TREE, TREE))
    return Transcript(
        "MCA-TEST-001",
        "send_payment",
        OK,
        (exchange(kw.pop("response", TOOL_ERROR)),),
        tree_before,
        tree_after,
        observed_before=before,
        observed_after=after,
        **kw,
    )


def test_a_new_payment_in_a_read_only_tool_is_vulnerable_whatever_the_target_said() -> None:
    result = judge(SPEC, paid(NO_PAYMENTS, ONE_PAYMENT, response=TOOL_ERROR))
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert result.effect.observed == ("tool:list_payments.payments[0]",)
    assert "effect seen: tool:list_payments.payments[0]" in result.evidence


def test_a_log_that_grew_is_bookkeeping_named_in_the_result_but_never_an_effect() -> None:
    result = judge(
        SPEC, paid(NO_PAYMENTS, NO_PAYMENTS, trees=(WITH_LOG, LOG_GREW), bookkeeping=("root/audit.jsonl",))
    )
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)
    assert result.effect.ignored == ("root/audit.jsonl",)


def test_the_same_log_is_an_effect_when_nothing_said_it_was_bookkeeping() -> None:
    result = judge(SPEC, paid(NO_PAYMENTS, NO_PAYMENTS, trees=(WITH_LOG, LOG_GREW)))
    assert result.verdict is Verdict.VULNERABLE


def test_a_field_that_moves_on_every_look_is_left_out_by_its_name_anywhere() -> None:
    before = {"tool:get_state": {"updated_at": 1, "arm": {"angle": 10}}}
    after = {"tool:get_state": {"updated_at": 2, "arm": {"angle": 10}}}
    result = judge(SPEC, paid(before, after, bookkeeping=("updated_at",)))
    assert result.verdict is Verdict.REFUSED
    assert result.effect.ignored == ("tool:get_state.updated_at",)


def test_a_probe_that_could_not_look_is_never_taken_for_an_effect() -> None:
    # The target stopped answering: its read-only tool failing after is a crash, not a payment.
    after = {"tool:list_payments": {UNOBSERVED: "no answer within 5s"}}
    result = judge(SPEC, paid(NO_PAYMENTS, after, response=DONE))
    assert result.verdict is Verdict.REFUSED
    assert result.effect.observed == ()


LISTED_BEFORE = {"tool:list_files": {"files": ["a.txt", "victim.txt", "z.txt"]}}
LISTED_AFTER = {"tool:list_files": {"files": ["a.txt", "z.txt", "victim.txt"]}}


@pytest.mark.parametrize(
    ("counted_by", "before", "after"),
    [
        # A payment stays made: one honest payment is the approval working, not an effect of the race.
        ("probes", NO_PAYMENTS, ONE_PAYMENT),
        # Over a URL target every case lives in the served folder, and zero configuration may learn a
        # listing of that whole folder as the effect probe. The victim, deleted once by the honest
        # redemption and put back, then sits elsewhere in the listing: the restorer's count (one) is
        # the judge, not the listing's shift (mcp-airlock's DSPEND-001, a false `vulnerable`).
        ("restorer", LISTED_BEFORE, LISTED_AFTER),
    ],
    ids=["payments-counted-by-probes", "victim-put-back-and-the-root-listing-moved"],
)
def test_a_race_is_judged_by_its_own_count_never_by_the_one_honest_effect_it_left(
    counted_by: str, before: Any, after: Any
) -> None:
    race = attack_spec("double-spend")
    exchanges = (exchange(DONE), exchange(TOOL_ERROR), exchange(TOOL_ERROR), exchange(TOOL_ERROR))
    once = SingleUse((0, 1), (2, 3), taken_racing=1, taken=1, counted_by=counted_by)
    record = Transcript(
        "MCA-TEST-001",
        "act",
        OK,
        exchanges,
        TREE,
        TREE,
        parts=(once,),
        observed_before=before,
        observed_after=after,
    )
    assert judge(race, record).verdict is Verdict.REFUSED
    twice = SingleUse((0, 1), (2, 3), taken_racing=2, taken=2, counted_by=counted_by)
    assert judge(race, replace(record, parts=(twice,))).verdict is Verdict.VULNERABLE


def test_one_row_removed_from_the_middle_of_a_list_is_one_change_not_every_row_after_it() -> None:
    from mcp_confirm_audit.oracle.effects import changes

    rows = [{"id": n, "status": "open"} for n in range(6)]
    assert changes("tool:list_orders", rows, rows[:2] + rows[3:]) == ["tool:list_orders[2]"]
    names = [f"f{n}" for n in range(6)]
    assert changes("tool:list_files", names, names[:2] + names[3:]) == ["tool:list_files[2]"]
    changed = [*rows[:3], {"id": 3, "status": "done"}, *rows[4:]]
    assert changes("tool:list_orders", rows, changed) == ["tool:list_orders[3].status"]


def test_a_refusal_whose_effect_probe_went_unasked_while_the_question_was_open_is_inconclusive() -> None:
    # A target that serves one request at a time: its read-only tool was not asked while its question
    # was open, so a payment made meanwhile could not have been seen there. Nothing moving proves nothing.
    before = {"tool:list_payments": {UNOBSERVED: WHILE_ASKING}}
    gated = ("added tool:list_payments.payments[*]",)
    result = judge(SPEC, paid(before, ONE_PAYMENT, response=TOOL_ERROR, effect_places=gated))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "tool:list_payments" in result.reason
    assert "one request at a time" in result.reason
    # Seen nowhere in particular by the controls: any probe left unasked may hide the effect.
    assert judge(SPEC, paid(before, ONE_PAYMENT, response=TOOL_ERROR)).verdict is Verdict.INCONCLUSIVE


def test_a_probe_unasked_while_the_question_was_open_hides_nothing_where_the_effect_shows_on_disk() -> None:
    # The controls saw the approval remove the case file: the disk judges it, the probe is not needed.
    before = {"tool:list_payments": {UNOBSERVED: WHILE_ASKING}}
    on_disk = ("removed case/victim.txt",)
    result = judge(SPEC, paid(before, ONE_PAYMENT, response=TOOL_ERROR, effect_places=on_disk))
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)


def test_an_ordinary_reply_where_no_refusal_control_could_run_is_not_taken_for_the_gate() -> None:
    # magnemo-mcp's handoff with no profile: an earlier attack kept every waiting note, so the call
    # answered "nothing waits" and asked nobody. Its decline could not be run either: nothing shows
    # the tool refused anything, and "refused by the tool" would say so.
    unlearned = Signatures(unlearned="the decline control could not be run: the call did not ask")
    result = judge(SPEC, paid(NO_PAYMENTS, NO_PAYMENTS, response=DONE, signatures=unlearned))
    assert result.verdict is Verdict.INCONCLUSIVE, result
    assert "nothing shows its gate refused" in result.reason
    # With its refusal controls run (nothing marked unlearned), the same reply reads as before.
    assert judge(SPEC, paid(NO_PAYMENTS, NO_PAYMENTS, response=DONE)).verdict is Verdict.REFUSED
