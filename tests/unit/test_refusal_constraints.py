"""What a refusal says the arguments must be (target.constraints): pure, table-driven."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_confirm_audit.target.constraints import concerns, read, value

# The SDK's own validation error, exactly as it passes pydantic's on (three fields failed).
PYDANTIC = (
    "Error executing tool t: 3 validation errors for tArguments\nspeed\n  Input should be less than or "
    "equal to 5 [type=less_than_equal, input_value=9, input_type=int]\n    For further information visit "
    "https://errors.pydantic.dev/2.14/v/less_than_equal\nmode\n  Input should be 'eco' or 'boost' "
    "[type=literal_error, input_value='x', input_type=str]\nname\n  String should have at least 3 "
    "characters [type=string_too_short, input_value='a', input_type=str]"
)

CASES: list[tuple[str, dict[str, Any], dict[str, dict[str, Any]], dict[str, str | None]]] = [
    (
        "Error executing tool set_vent: unknown vent 'x': vent must be one of north, south, roof",
        {"vent": "x", "angle": 1},
        {"vent": {"enum": ["north", "south", "roof"]}},
        {"vent": "vent"},
    ),
    (
        "rejected: angle must be between 15 and 75 degrees",
        {"vent": "north", "angle": 1},
        {"angle": {"minimum": 15, "maximum": 75}},
        {"angle": None},
    ),
    ("Unknown bed 'x'. List beds first.", {"bed_id": "x"}, {"bed_id": {}}, {"bed_id": "bed"}),
    (
        "recipient is not a phone number the bridge knows",
        {"recipient": "x", "body": "y"},
        {"recipient": {"format": "phone"}},
        {"recipient": None},
    ),
    ("title must be at least 12 characters", {"title": "x"}, {"title": {"minLength": 12}}, {"title": None}),
    (
        "'x' is not a phone number (eleven digits, country code first)",
        {"to": "x", "body": "x"},
        {"to": {"pattern": "^[1-9][0-9]{10}$"}},
        {"to": None},
    ),
    ("mode should be eco or boost", {"mode": "x"}, {"mode": {"enum": ["eco", "boost"]}}, {"mode": None}),
]


@pytest.mark.parametrize(("text", "args", "facets", "listed"), CASES)
def test_a_refusal_names_the_argument_and_its_rule(
    text: str, args: dict[str, Any], facets: dict[str, dict[str, Any]], listed: dict[str, str | None]
) -> None:
    found = {c.arg: c for c in read(text, args)}
    assert {arg: dict(c.facets) for arg, c in found.items()} == facets
    assert {arg: c.listed for arg, c in found.items()} == listed


def test_the_sdks_validation_errors_say_exactly_which_field_failed() -> None:
    found = {c.arg: dict(c.facets) for c in read(PYDANTIC, {"speed": 9, "mode": "x", "name": "a"})}
    assert found == {"speed": {"maximum": 5}, "mode": {"enum": ["eco", "boost"]}, "name": {"minLength": 3}}


def test_a_refusal_that_states_no_rule_teaches_nothing() -> None:
    assert read("rejected: joint 3 out of range", {"joint": 1, "degrees": 1}) == []
    assert read("something went wrong", {"a": "x", "b": "y"}) == []


def test_a_clause_is_about_the_argument_it_names_or_quotes_back() -> None:
    assert concerns("unknown collection 'Unorganized'", {"collection_id": "Unorganized", "url": "u"}) == [
        "collection_id"
    ]
    assert concerns("'zz' is not accepted", {"a": "zz", "b": "y"}) == ["a"]


def test_a_range_is_met_in_its_middle_never_at_an_edge() -> None:
    assert value({"type": "integer"}, {"minimum": 15, "maximum": 75}) == 45
    assert value({"type": "number"}, {"minimum": 0.5, "maximum": 1.5}) == 1.0
    assert value({"type": "integer"}, {"enum": [1, 2]}) is None


def test_an_optional_argument_the_refusal_says_is_required_is_named() -> None:
    props = {"op": {"type": "string"}, "content": {"type": "string"}}
    found = read("Error executing tool memory_propose: content is required for add", {"op": "add"}, props)
    assert [(c.arg, dict(c.facets)) for c in found] == [("content", {"x-required": True})]


def test_arguments_a_refusal_says_a_kind_requires_are_named() -> None:
    props = {"kind": {"type": "string"}, "path": {"type": "string"}, "new_content": {"type": "string"}}
    said = "config proposals require both `path` and `new_content`"
    found = read(said, {"kind": "config"}, props)
    assert {c.arg for c in found if c.facets.get("x-required")} == {"path", "new_content"}


def test_a_list_refusal_is_about_each_item() -> None:
    props = {"crops": {"type": "array", "items": {"type": "string"}}}
    found = read("unknown crop ['x']: crops are tomato, basil, kale", {"crops": ["x"]}, props)
    assert [(c.arg, c.facets.get("enum")) for c in found] == [("crops", ["tomato", "basil", "kale"])]


def test_a_value_echoed_after_a_colon_names_its_argument_even_in_a_list() -> None:
    props = {"to": {"type": "array", "items": {"type": "string"}}, "sender": {"type": "string"}}
    found = read("invalid email: someone", {"to": ["someone"], "sender": "a@example.com"}, props)
    assert [(c.arg, c.facets.get("format")) for c in found] == [("to", "email")]


def test_arguments_a_refusal_asks_to_provide_are_required() -> None:
    props = {"to": {"type": "string"}, "body_text": {"type": "string"}, "template_id": {"type": "string"}}
    found = read("no content: provide body_text or template_id", {"to": "a@example.com"}, props)
    assert {c.arg for c in found if c.facets.get("x-required")} == {"body_text", "template_id"}


def test_a_rule_about_a_field_inside_an_object_argument_is_read_there() -> None:
    """magnemo-mcp's `stage`: the refusal names `store`, a field of the object argument `note`."""
    from mcp_confirm_audit.engine.search import _fields, _with_fields

    props = _with_fields(
        {
            "note": {
                "type": "object",
                "properties": {"partition": {"type": "string", "enum": ["dev"]}, "store": {"type": "string"}},
            }
        }
    )
    sent = _fields({"note": {"partition": "dev", "store": "mcp-confirm-audit"}})
    said = (
        "ERROR: REFUSED: store 'mcp-confirm-audit' is not valid in partition 'dev' (valid: knowledge, debt)"
    )
    found = {c.arg: c.facets for c in read(said, sent, props)}
    assert found["note.store"] == {"enum": ["knowledge", "debt"]}
