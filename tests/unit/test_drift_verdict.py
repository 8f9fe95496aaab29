"""subject-drift's verdict: an effect on what a change after the question brought in, read from the probes."""

from __future__ import annotations

from typing import Any

import pytest
from test_verdict import DONE, OK, TREE, exchange
from verdict_records import attack_spec

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import FileIdentity, Layer, Transcript, TreeSnapshot, Verdict
from mcp_confirm_audit.oracle.effects import drift_touched, holding
from mcp_confirm_audit.techniques._drift import Drift

DRIFT = attack_spec("subject-drift")


def link(id_: str, collection: str | None = "c1", **more: Any) -> dict[str, Any]:
    return {"id": id_, "url": f"https://example.org/{id_}", "collection": collection, **more}


# l3 was moved into c1 after the question: the collection now holds l1, l2 and l3.
DRIFTED = {"tool:list_links": {"links": [link("l1"), link("l2"), link("l3")]}}


def answered(after: Any, *, drift: tuple[Any, ...] = ("l3",), **kw: Any) -> Transcript:
    return Transcript(
        "MCA-TEST-001",
        "delete_collection",
        OK,
        (exchange(DONE),),
        TREE,
        TREE,
        observed_before=kw.pop("before", DRIFTED),
        observed_after=after,
        parts=(Drift(drift),),
        **kw,
    )


def test_deleting_the_link_moved_in_after_the_question_is_acting_on_more_than_was_shown() -> None:
    result = judge(DRIFT, answered({"tool:list_links": {"links": []}}))
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert 'the entry holding "l3"' in result.reason
    assert "acted on more than was shown" in result.reason


def test_deleting_only_the_links_shown_is_the_action_working() -> None:
    result = judge(DRIFT, answered({"tool:list_links": {"links": [link("l3")]}}))
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)
    assert "acted on what was shown only" in result.reason
    # The effect itself is still recorded: two links went.
    assert len(result.effect.observed) == 2


def test_an_entry_of_what_came_in_that_changed_is_touched_too() -> None:
    # The collection went and the moved link was left orphaned: it is not as it was.
    result = judge(DRIFT, answered({"tool:list_links": {"links": [link("l3", None)]}}))
    assert result.verdict is Verdict.VULNERABLE


def test_a_payment_to_the_recipient_edited_in_after_the_question_is_vulnerable() -> None:
    before: dict[str, Any] = {"tool:list_payments": {"payments": []}}
    after = {"tool:list_payments": {"payments": [{"id": 1, "recipient": "mallory", "amount_cents": 500}]}}
    result = judge(DRIFT, answered(after, before=before, drift=("mallory",)))
    assert result.verdict is Verdict.VULNERABLE


def test_an_effect_no_probe_can_tie_to_the_change_is_not_judged_safe() -> None:
    before: dict[str, Any] = {"tool:list_payments": {"payments": []}}
    after = {"tool:list_payments": {"payments": [{"id": 1, "recipient": "acme"}]}}
    result = judge(DRIFT, answered(after, before=before, drift=("mallory",)))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "cannot be told" in result.reason


def test_no_effect_at_all_is_judged_by_the_answer_as_ever() -> None:
    result = judge(DRIFT, answered(DRIFTED))
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)
    assert result.reason == DONE.text


def test_an_entry_is_the_same_wherever_it_sits_in_the_list_and_bookkeeping_fields_are_left_out() -> None:
    before = {"p": {"links": [link("l1", seen=1), link("l3", seen=1)]}}
    after = {"p": {"links": [link("l3", seen=2)]}}
    assert drift_touched(before, after, ("l3",), ("seen",)) == ([], True)
    assert drift_touched(before, after, ("l3",)) == (['p: the entry holding "l3"'], True)
    assert holding({"a": [{"x": 1}, {"y": True}]}, (1,)) == [(1, '{"x": 1}')]


def test_what_a_drift_call_brings_in_is_read_from_a_list_argument_too() -> None:
    # Seen on a real server: its drift call moves links by a list (`organise_links(link_ids=[103])`);
    # the id inside the list is what the person never saw, so the family has something to look for.
    from mcp_confirm_audit.techniques.subject_drift import _scalars

    shown = _scalars({"collection": "Doomed"})
    drift = _scalars({"link_ids": [103], "collection": "Doomed"})
    assert [v for v in drift if v not in shown] == [103]
    assert _scalars({"flags": [True], "ids": ("a", "a", 2)}) == ["a", 2]


STORE_BEFORE = TreeSnapshot({**TREE.entries, "root/links.json": FileIdentity("file", 1, 20, 5, 100)})
STORE_AFTER = TreeSnapshot({**TREE.entries, "root/links.json": FileIdentity("file", 1, 20, 3, 101)})


@pytest.mark.parametrize(
    ("links_after", "verdict"),
    [
        # Seen on a real server: its store is a file the action rewrites. The rewrite is the action
        # working; the probe that reads the store says whether the link moved in went too.
        ([link("l3")], Verdict.REFUSED),
        ([], Verdict.VULNERABLE),
    ],
)
def test_a_store_on_disk_rewritten_by_the_action_is_judged_by_what_its_probe_shows(
    links_after: list[dict[str, Any]], verdict: Verdict
) -> None:
    on_disk = Transcript(
        "MCA-TEST-001",
        "delete_collection",
        OK,
        (exchange(DONE),),
        STORE_BEFORE,
        STORE_AFTER,
        observed_before=DRIFTED,
        observed_after={"tool:list_links": {"links": links_after}},
        parts=(Drift(("l3",)),),
    )
    assert judge(DRIFT, on_disk).verdict is verdict
