"""Arguments for an action the harness has no reason to choose: schema-valid, harmless, and varied validly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_confirm_audit.confirmations.values import field_of
from mcp_confirm_audit.engine.action import Instance, SetupFailed, prepare, render, varied_args
from mcp_confirm_audit.models import Outcome, Response
from mcp_confirm_audit.profile.loader import SetupCall
from mcp_confirm_audit.target.discovery import filler
from mcp_confirm_audit.target.driver import ToolInfo


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, 1),  # never 0: "amount must be positive" refuses before it asks
        ({"type": "integer", "minimum": 5}, 5),
        ({"type": "integer", "exclusiveMinimum": 0}, 1),
        ({"type": "number", "maximum": 0.5}, 0.5),
        ({"type": "integer", "minimum": 3, "multipleOf": 5}, 5),
        ({"type": "string", "enum": ["done", "todo"]}, "done"),
        ({"type": "string", "examples": ["J1"]}, "J1"),
        ({"const": "v1"}, "v1"),
        ({"type": "string", "default": "x"}, "x"),
        ({"type": "string", "format": "email"}, "audit@example.com"),
        ({"type": "string", "minLength": 20}, "mcp-confirm-auditxxx"),
        ({"type": "string", "maxLength": 3}, "mcp"),
        ({"anyOf": [{"type": "null"}, {"type": "integer"}]}, 1),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 2}, [1, 1]),
        ({"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"]}, {"a": False}),
    ],
)
def test_a_filler_is_the_harmless_value_the_schema_allows(schema: dict[str, Any], value: Any) -> None:
    assert filler(schema) == value


def test_another_action_changes_every_plain_value_and_stays_inside_the_schema() -> None:
    schema = {
        "properties": {
            "status": {"enum": ["done", "todo"]},
            "amount": {"type": "integer", "maximum": 5},
            "kind": {"const": "wire"},
        }
    }
    args = {"status": "done", "amount": 5, "kind": "wire", "memo": "rent", "id": "{transfer}"}
    assert varied_args(args, 1, schema) == {
        "status": "todo",
        "amount": 4,
        "kind": "wire",
        "memo": "rent-1",
        "id": "{transfer}",
    }


def test_a_saved_value_keeps_its_type_where_it_is_the_whole_template() -> None:
    saved = {"transfer": 42, "who": "acme"}
    assert render({"id": "{transfer}", "note": "to {who}", "keep": "{unknown}"}, saved) == {
        "id": 42,
        "note": "to acme",
        "keep": "{unknown}",
    }


def test_a_dotted_field_reaches_into_nested_results_and_names_what_is_missing() -> None:
    result = {"transfer": {"ids": ["t-1"]}}
    assert field_of(result, "transfer.ids.0") == "t-1"
    with pytest.raises(KeyError, match="id"):
        field_of(result, "transfer.id")


def test_a_variant_that_runs_past_the_maximum_comes_round_inside_both_bounds() -> None:
    # Degrees 1..45: the 50th variant of 1 is not -49 (which the schema forbids) but 6.
    schema = {"properties": {"degrees": {"type": "integer", "minimum": 1, "maximum": 45}}}
    assert varied_args({"degrees": 1}, 50, schema) == {"degrees": 6}


def test_arguments_the_profile_fills_from_a_setup_call_are_not_taken_for_a_token_flow() -> None:
    from mcp_confirm_audit.confirmations.token import Token
    from mcp_confirm_audit.profile.loader import profile_from_mapping
    from mcp_confirm_audit.target.discovery import plan_tools
    from mcp_confirm_audit.target.driver import ToolInfo

    props = {"change_id": {"type": "string"}, "confirmation_token": {"type": "string"}}
    apply = ToolInfo("apply_change", "", {"type": "object", "properties": props}, False, None)
    preview = ToolInfo("preview_change", "", {"type": "object", "properties": {}}, True, None)
    guessed = plan_tools(
        [apply, preview], profile_from_mapping({"command": "x", "tool": "apply_change"}, source="t")
    )
    assert isinstance(guessed[0].mechanism, Token)
    # The profile made the preview a setup step: the gated call confirms, and round one says the rest.
    stated = {
        "command": "x",
        "tool": "apply_change",
        "setup": [
            {"tool": "preview_change", "args": {}, "save": {"id": "change_id", "token": "confirmation_token"}}
        ],
        "args": {"change_id": "{id}", "confirmation_token": "{token}"},
    }
    assert plan_tools([apply, preview], profile_from_mapping(stated, source="t"))[0].mechanism is None


def test_another_tool_gets_the_actions_value_only_where_its_schema_takes_that_type() -> None:
    # A bookmark server's delete_collection takes a collection's id (an int); its save_link takes a
    # collection's name (a string). Sending 101 there is refused by validation and tests nothing.
    use = Instance(arguments={"collection": 101, "note": "kept"}, label="delete_collection")
    save_link = ToolInfo(
        "save_link",
        "",
        {
            "properties": {
                "collection": {"type": "string"},
                "url": {"type": "string"},
                "note": {"type": "string"},
            },
            "required": ["collection", "url"],
        },
        read_only=None,
        destructive=None,
    )
    sent = use.plain_arguments(save_link)
    assert isinstance(sent["collection"], str)
    assert sent["note"] == "kept"
    by_id = ToolInfo(
        "archive",
        "",
        {"properties": {"collection": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}},
        None,
        None,
    )
    assert use.plain_arguments(by_id)["collection"] == 101


@pytest.mark.anyio
@pytest.mark.parametrize(("variant", "batch"), [(0, "B2"), (1, "B3"), (2, "B2")])
async def test_another_use_saved_from_a_listing_takes_its_next_entry(variant: int, batch: str) -> None:
    # The photos server: list_batches has nothing to vary, so only the entry saved can make another use.
    listed = {"batches": [{"batch_id": "B2"}, {"batch_id": "B3"}]}

    async def call(label: str, tool: str, args: Any) -> Response:
        return Response(Outcome.COMPLETE, json.dumps(listed), structured=listed)

    setup = (SetupCall("list_batches", {}, {"b": "batches.0.batch_id"}),)
    done = await prepare(call, "revert_batch", setup, {"batch_id": "{b}"}, {}, variant=variant)
    assert done.arguments == {"batch_id": batch}


@pytest.mark.anyio
async def test_a_setup_call_that_refuses_the_harness_own_variation_is_not_blamed_on_the_profile() -> None:
    # A server with one setting: the profile's setup is right, and the second action the harness
    # made up for a cross-target attack (theme -> theme-1) is what it refused.
    async def call(label: str, tool: str, args: Any) -> Response:
        if args["key"] != "theme":
            return Response(Outcome.TOOL_ERROR, f"unknown setting {args['key']!r}")
        return Response(Outcome.COMPLETE, json.dumps({"change_id": "c1"}), structured={"change_id": "c1"})

    setup = (SetupCall("preview_set_setting", {"key": "theme", "value": "dark"}, {"cid": "change_id"}),)
    done = await prepare(call, "apply_change", setup, {"change_id": "{cid}"}, {})
    assert done.arguments == {"change_id": "c1"}
    with pytest.raises(SetupFailed) as varied:
        await prepare(call, "apply_change", setup, {"change_id": "{cid}"}, {}, variant=1)
    said = str(varied.value)
    assert "refused the values the harness varied" in said, said
    assert "'theme' -> 'theme-1'" in said, said
    assert "fix its args" not in said, said

    async def refused(label: str, tool: str, args: Any) -> Response:
        return Response(Outcome.TOOL_ERROR, "missing field")

    with pytest.raises(SetupFailed) as written:
        await prepare(refused, "apply_change", setup, {"change_id": "{cid}"}, {})
    assert "fix its args: under setup: in the profile" in str(written.value)


@pytest.mark.anyio
async def test_each_use_of_a_value_action_writes_content_of_its_own_and_keeps_its_subject() -> None:
    # mcp-changeset's notes: a second preview of the content a note already holds is "nothing to
    # change", so every attack after the controls' own use of `write_note(name, content)` judged nothing.
    async def call(label: str, tool: str, args: Any) -> Response:
        raise AssertionError("no setup call")

    template = {"change_id": "mcp-confirm-audit", "name": "mcp-confirm-audit", "content": "mcp-confirm-audit"}
    uses = [
        (await prepare(call, "apply_change", (), template, {}, variant=variant, mark=mark)).arguments
        for mark in ("3", "4")
        for variant in (0, 1)
    ]
    written = [use["content"] for use in uses]
    assert written == [
        "mcp-confirm-audit #3",
        "mcp-confirm-audit-1 #3",
        "mcp-confirm-audit #4",
        "mcp-confirm-audit-1 #4",
    ]
    # The note each writes, and the id its preview hands out, are the subject: the same for one variant.
    assert {(use["name"], use["change_id"]) for use in uses[::2]} == {
        ("mcp-confirm-audit", "mcp-confirm-audit")
    }
    # Without a mark (the honest-flow search), the values are the template's.
    plain = await prepare(call, "apply_change", (), template, {})
    assert plain.arguments == template
