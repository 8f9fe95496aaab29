"""ungated reaches what the gated action would touch: a `delete_links(link_ids)` beside a gated `delete_collection`.

linkwarden-mcp 0.1.6 asks before deleting a collection, while its `delete_links`
deletes the collection's links by id asking nobody; the harness sent it an empty
list and missed it. The ids are read from what the probes show where the gated
effect showed, for the entries that name the action's subject; a call handed an
empty list tried nothing; and the SDK refusing a control's arguments is never
learned as the gate's words.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from verdict_records import judged_ungated, plain_call

from mcp_confirm_audit.engine.controls import _Runner
from mcp_confirm_audit.models import Exchange, Layer, Outcome, Response, Result, Verdict
from mcp_confirm_audit.oracle.effects import touched_items
from mcp_confirm_audit.target.arguments import ids_for

# As the collections reference server's list_links shows them: two links in the victim's collection.
LINKS = {
    "tool:list_links": {
        "links": [
            {"id": "l1", "url": "https://example.org/a", "collection": "c0"},
            {"id": "l20", "url": "https://example.org/b", "collection": "c19"},
            {"id": "l21", "url": "https://example.org/c", "collection": "c19"},
            {"id": "l3", "url": "https://example.org/d", "collection": None},
        ]
    }
}
# As Linkwarden keeps them (read by rows from a JSON file): a link names its collection by `collectionId`.
LINKWARDEN = {
    "file:linkwarden.json": {
        "next_id": 12,
        "collections": [{"id": 1, "name": "Reading"}, {"id": 2, "name": "Other", "position": 1}],
        "links": [
            {"id": 10, "collectionId": 1},
            {"id": 11, "collectionId": 1},
            {"id": 1, "collectionId": 2, "pinned": 1},
        ],
    }
}


def test_the_entries_the_gated_effect_removes_that_name_the_subject_are_its_touched_items() -> None:
    touched = touched_items(LINKS, ["removed tool:list_links.links[*]"], {"collection_id": "c19"})
    assert touched == {"links": ["l20", "l21"]}


@pytest.mark.parametrize(
    "gated",
    [
        # Only known as a file rewritten in place: every list it holds is looked at.
        ("rewritten root/linkwarden.json",),
        ("removed file:linkwarden.json.links[*]", "removed file:linkwarden.json.collections[*]"),
    ],
)
def test_a_collection_named_by_title_reaches_its_links_through_the_field_that_refers_to_it(
    gated: tuple[str, ...],
) -> None:
    touched = touched_items(LINKWARDEN, gated, {"collection": "Reading"})
    # Link 1 is in collection 2, whose `position` is 1: only a field named for a reference counts.
    assert touched == {"collections": [1], "links": [10, 11]}


def test_a_number_of_the_action_names_no_entry_unless_its_argument_is_a_reference() -> None:
    assert touched_items(LINKWARDEN, ("rewritten root/linkwarden.json",), {"amount": 1}) == {}
    by_id = touched_items(LINKWARDEN, ("rewritten root/linkwarden.json",), {"collection_id": 2})
    assert by_id == {"collections": [2], "links": [1]}


def test_nothing_is_touched_where_the_gated_effect_did_not_show() -> None:
    assert touched_items(LINKS, ["removed tool:list_payments.payments[*]"], {"collection_id": "c19"}) == {}


STRINGS = {"type": "array", "items": {"type": "string"}}


def test_id_arguments_take_the_touched_ids_of_their_own_kind_and_type() -> None:
    properties: dict[str, Any] = {
        "link_ids": STRINGS,
        "linkIds": {"anyOf": [STRINGS, {"type": "null"}]},
        "link_id": {"type": "string"},
        "collection_id": {"type": "string"},
        "paid": {"type": "string"},  # ends in "id", is no id
        "api_key": {"type": "string"},  # a key of no touched kind
        "numbers": {"type": "array", "items": {"type": "integer"}},
    }
    filled = ids_for(properties, {"links": ["l20", "l21"], "collections": ["c19"]}, skip={"collection_id"})
    assert filled == {"link_ids": ["l20", "l21"], "linkIds": ["l20", "l21"], "link_id": "l20"}
    # A list of integers takes no "l20"; a bare `ids` only when one kind was touched.
    assert ids_for({"link_ids": {"type": "array", "items": {"type": "integer"}}}, {"links": ["l20"]}) == {}
    assert ids_for({"ids": STRINGS}, {"links": ["l20"]}) == {"ids": ["l20"]}
    assert ids_for({"ids": STRINGS}, {"links": ["l20"], "collections": ["c19"]}) == {}


# -- a call handed an empty list tried nothing ----------------------------------------------------


def called(name: str, arguments: dict[str, Any], response: Response) -> Exchange:
    return plain_call(name, arguments, response)


def judged(*calls: Exchange) -> Result:
    return judged_ungated("delete_collection", *calls)


def test_a_call_given_an_empty_list_that_did_nothing_is_no_call_that_ran() -> None:
    # linkwarden-mcp's organise_links(link_ids=[]): "Updated 0 links", and nothing was tried.
    result = judged(called("organise_links", {"link_ids": []}, Response(Outcome.COMPLETE, "Updated 0 links")))
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, None), result.reason
    assert "none of the 1 calls to other tools ran" in result.reason


def test_a_call_given_ids_that_moved_nothing_at_the_gate_still_ran() -> None:
    refused = Response(Outcome.TOOL_ERROR, "not deleted: l20 belongs to a collection, which asks to confirm")
    result = judged(
        called("organise_links", {"link_ids": []}, Response(Outcome.COMPLETE, "Updated 0 links")),
        called("delete_links", {"link_ids": ["l20"]}, refused),
    )
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.reason


# -- the SDK's argument validation is never learned as the gate's words ----------------------------


def test_a_control_refused_on_its_arguments_by_the_sdk_teaches_no_gate_signature() -> None:
    run = _Runner(SimpleNamespace(ignore=(), bookkeeping_notes={}), *([None] * 6))  # type: ignore[arg-type]
    invalid = Response(
        Outcome.TOOL_ERROR,
        "Error executing tool delete_collection: 1 validation error for delete_collectionArguments\n"
        "collection_id\n  Input should be a valid string [type=string_type, input_value=1, input_type=int]",
    )
    run.gate_said("decline", invalid)
    assert run.gate == []
    run.gate_said("decline", Response(Outcome.COMPLETE, "not deleted: the person answered decline"))
    assert [s.control for s in run.gate] == ["decline"]
