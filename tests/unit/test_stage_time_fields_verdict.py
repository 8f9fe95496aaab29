"""stage-time-fields' verdict, over recorded transcripts: the real item acted on, or who refused it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from test_verdict import DONE, OK, TREE, exchange
from verdict_records import attack_spec

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import Layer, Outcome, Response, Transcript, Verdict
from mcp_confirm_audit.techniques.stage_time_fields import StageDecl, StageRefused, _least, _understated

SPEC = attack_spec("stage-time-fields")
NONE_POSTED: dict[str, Any] = {"tool:list_posted": {"posted": []}}
STATED = StageDecl("stage_invoice", {"amount_cents": (742000, 1)}, ("doc-2291",))


def posted(document: str) -> dict[str, Any]:
    return {"tool:list_posted": {"posted": [{"document_id": document, "amount_cents": 1}]}}


def run(last: Response, after: dict[str, Any], *parts: Any, stated: StageDecl = STATED) -> Transcript:
    return Transcript(
        "MCA-TEST-001",
        "stage_invoice",
        OK,
        (exchange(DONE), exchange(last)),
        TREE,
        TREE,
        observed_before=NONE_POSTED,
        observed_after=after,
        parts=(stated, *parts),
    )


def test_the_real_document_posted_with_nobody_asked_is_vulnerable() -> None:
    result = judge(SPEC, run(DONE, posted("doc-2291")))
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert "amount_cents stated as 1, not 742000" in result.reason
    assert '"doc-2291"' in result.reason


def test_an_effect_no_probe_ties_to_the_item_is_inconclusive() -> None:
    result = judge(SPEC, run(DONE, posted("doc-9999")))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "add an effect" in result.reason


def test_the_commit_refusing_the_item_staged_so_is_the_gate() -> None:
    result = judge(SPEC, run(Response(Outcome.TOOL_ERROR, "stg_1 waits for sign-off"), NONE_POSTED))
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)
    assert "the commit refused the item staged so" in result.reason


def test_the_stage_refusing_the_statement_is_the_gate_before_anyone_is_asked() -> None:
    refusal = Response(Outcome.TOOL_ERROR, "amount_cents 1 is not what document doc-2291 says")
    result = judge(SPEC, run(refusal, NONE_POSTED, StageRefused(refusal.text)))
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)
    assert "the stage refused the item stated falsely" in result.reason


def test_a_commit_that_never_answers_is_no_refusal() -> None:
    result = judge(SPEC, run(Response(Outcome.TRANSPORT, "no answer within 10s"), NONE_POSTED))
    assert result.verdict is Verdict.INCONCLUSIVE


def test_a_commit_that_answers_normally_with_nothing_done_is_inconclusive() -> None:
    result = judge(SPEC, run(Response(Outcome.COMPLETE, "queued"), NONE_POSTED))
    assert result.verdict is Verdict.INCONCLUSIVE


def test_each_number_goes_to_the_least_its_schema_takes_and_nothing_else_changes() -> None:
    schema = {"properties": {"amount_cents": {"type": "integer", "minimum": 100}, "rate": {"type": "number"}}}
    args = {"amount_cents": 742000, "rate": 3.5, "document_id": "doc-2291", "urgent": True, "count": 1}
    assert _understated(args, schema) == {"amount_cents": 100, "rate": 0.01}
    assert _least(10, {"exclusiveMinimum": 4}) == 5
    assert _least(7.5, {"exclusiveMinimum": 0}) == 0.01


def test_the_item_staged_as_another_record_is_judged_by_its_own_id_not_the_other_records() -> None:
    # MCA-STAGEDECL-002: the order and amount restated as PO-1191's; only doc-2291 (kept) names the item.
    other = StageDecl(
        "stage_invoice", {"po_number": ("PO-1180", "PO-1191"), "amount_cents": (742000, 65500)}, ("doc-2291",)
    )
    found = judge(SPEC, run(DONE, posted("doc-2291"), stated=other))
    assert (found.verdict, found.layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert 'po_number stated as "PO-1191", not "PO-1180"' in found.reason
    # The other record's own document posted is not the item: nothing shows the item acted on.
    assert judge(SPEC, run(DONE, posted("doc-2293"), stated=other)).verdict is Verdict.INCONCLUSIVE


def test_a_value_every_order_shares_names_no_item_so_another_order_posted_is_no_finding() -> None:
    # invoice-intake-mcp: the honest stage's currency ("EUR") is left as it was, like the id, but every
    # purchase order holds it too: the other record's entry changing is not the real item acted on.
    stated = StageDecl("stage_invoice", {"po_number": ("PO-1187", "PO-1191")}, ("doc-2291", "EUR"))
    orders = [{"po": "PO-1187", "currency": "EUR"}, {"po": "PO-1191", "currency": "EUR", "invoiced": False}]
    # The item staged as that order before the snapshot holds every mark: it is the item, not the order.
    staged = {"staged": [{"document_id": "doc-2291", "po": "PO-1191", "currency": "EUR"}]}
    before = {**NONE_POSTED, "tool:list_orders": {"orders": orders}, "tool:list_staged": staged}
    after = {**before, "tool:list_orders": {"orders": [orders[0], {**orders[1], "invoiced": True}]}}
    transcript = run(DONE, after, stated=stated)
    transcript = replace(transcript, observed_before=before)
    result = judge(SPEC, transcript)
    assert result.verdict is Verdict.INCONCLUSIVE, result.reason
    # The real document posted is still the finding, named by its id alone.
    posted_too = replace(transcript, observed_after={**after, **posted("doc-2291")})
    result = judge(SPEC, posted_too)
    assert result.verdict is Verdict.VULNERABLE, result.reason
    assert '"EUR"' not in result.reason.split("acted on")[-1]
