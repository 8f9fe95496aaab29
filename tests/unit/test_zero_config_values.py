"""Zero configuration reaches a real server: values it accepts, handles from any tool, payloads that ask."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest

from mcp_confirm_audit.confirmations.detect import asking_payload, from_response
from mcp_confirm_audit.confirmations.flag import Flag
from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.models import Outcome, Response
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target import arguments
from mcp_confirm_audit.target.arguments import FILLER, another, decides, matching, value_for
from mcp_confirm_audit.target.discovery import handle_source, listed_values, plan_tools
from mcp_confirm_audit.target.driver import ToolInfo

TODAY = dt.date.today().isoformat()


@pytest.mark.parametrize(
    ("name", "prop", "value"),
    [
        ("phone", {"type": "string"}, "+12025550123"),
        ("recipient_msisdn", {"type": "string"}, "+12025550123"),
        ("to", {"type": "string", "format": "phone"}, "+12025550123"),
        ("follow_up_date", {"type": "string"}, TODAY),
        ("when", {"type": "string", "format": "date"}, TODAY),
        ("applied_on", {"type": "string"}, TODAY),
        ("contact", {"type": "string", "format": "email"}, "audit@example.com"),
        ("webhook_url", {"type": "string"}, "https://example.com/mcp-confirm-audit"),
        ("currency", {"type": "string"}, "USD"),
    ],
)
def test_a_typed_argument_gets_a_value_of_its_type_never_the_filler(
    name: str, prop: dict[str, Any], value: Any
) -> None:
    assert value_for(name, prop) == value


def test_a_pattern_is_honoured_with_the_simplest_string_that_matches_it() -> None:
    prop = {"type": "string", "pattern": r"^INV-\d{4}$"}
    value = value_for("invoice", prop)
    assert re.fullmatch(r"INV-\d{4}", value), value
    assert value_for("invoice", prop) == value, "the same value on every run"
    assert matching(r"^[A-Z]{3}$", 0, None) == "AAA"


def test_a_phone_named_argument_with_its_own_pattern_gets_what_the_pattern_allows() -> None:
    value = value_for("phone", {"type": "string", "pattern": r"^0\d{9}$"})
    assert re.fullmatch(r"0\d{9}", value), value


def test_an_id_a_listing_returned_is_used_where_the_schema_offers_none() -> None:
    prop = {"type": "string", "pattern": r"^S-\d{3}$"}
    assert value_for("slot_id", prop, {"slot_id": "S-102"}) == "S-102"
    # A listed value that breaks the schema's pattern is not used.
    assert value_for("slot_id", prop, {"slot_id": "slot-2"}) != "slot-2"
    # The schema's own offer comes first.
    assert value_for("slot_id", {"type": "string", "examples": ["S-900"]}, {"slot_id": "S-102"}) == "S-900"


def test_plain_text_stays_harmless_filler() -> None:
    assert value_for("memo", {"type": "string"}) == FILLER


@pytest.mark.parametrize(
    ("value", "other"),
    [
        ("+12025550123", "+12025550124"),
        ("2030-01-31", "2030-02-01"),
        ("audit@example.com", "audit+1@example.com"),
        ("rent", None),
    ],
)
def test_another_value_of_the_same_shape_is_still_valid(value: str, other: str | None) -> None:
    assert another(value, 1) == other


def _tool(
    name: str, *, read_only: bool | None, required: dict[str, Any] | None = None, **kw: Any
) -> ToolInfo:
    schema = {"type": "object", "properties": dict(required or {}), "required": list(required or {})}
    return ToolInfo(name, kw.pop("description", ""), schema, read_only, None, kw.pop("output_schema", None))


PLAN_OUT = {"type": "object", "properties": {"plan_id": {"type": "string"}, "slot_id": {"type": "string"}}}


def test_a_handle_minted_by_a_tool_declared_read_only_is_found_in_its_output_schema() -> None:
    planner = _tool(
        "plan_to_pose", read_only=True, required={"x": {"type": "number"}}, output_schema=PLAN_OUT
    )
    execute = _tool("execute_plan", read_only=False, required={"plan_id": {"type": "string"}})
    status = _tool("get_status", read_only=True)
    found = handle_source("plan_id", execute, [status, planner, execute], {})
    assert found is not None
    assert found[0].name == "plan_to_pose"
    assert found[1] == "plan_id"
    (plan,) = plan_tools([status, planner, execute], Profile(command="x {root}"))
    assert [step.tool for step in plan.setup] == ["plan_to_pose"]
    assert plan.template == {"plan_id": "{plan_id}"}
    assert "declared read-only" in plan.notes[0]


def test_a_handle_is_found_in_what_a_listing_returned_when_no_schema_says() -> None:
    listing = _tool("list_orders", read_only=True)
    cancel = _tool("cancel_order", read_only=False, required={"order_id": {"type": "string"}})
    seen = {"list_orders": {"orders": [{"order_id": "O-7", "total": 3}]}}
    found = handle_source("order_id", cancel, [listing, cancel], seen)
    assert found is not None
    assert found[1] == "orders.0.order_id"
    assert listed_values([listing, cancel], seen) == {"order_id": "O-7", "total": 3}


def test_a_null_or_empty_field_is_never_a_handle() -> None:
    listing = _tool("list_orders", read_only=True)
    cancel = _tool("cancel_order", read_only=False, required={"order_id": {"type": "string"}})
    seen = {"list_orders": {"orders": [{"order_id": None}, {"order_id": ""}]}}
    assert handle_source("order_id", cancel, [listing, cancel], seen) is None


def _result(payload: dict[str, Any]) -> Response:
    return Response(outcome=Outcome.COMPLETE, text=json.dumps(payload))


@pytest.mark.parametrize(
    "payload",
    [
        {"decision": "ASK", "reason": "needs a person"},
        {"needs_confirm": True, "message": "call again"},
        {"pending_approval": True},
        {"status": "requires_approval"},
    ],
)
def test_a_payload_that_waits_for_a_person_is_asking(payload: dict[str, Any]) -> None:
    assert asking_payload(_result(payload)) is not None


@pytest.mark.parametrize(
    "payload", [{"decision": "ALLOW"}, {"needs_confirm": False}, {"status": "done"}, {"ok": True}]
)
def test_a_payload_that_does_not_wait_is_not_asking(payload: dict[str, Any]) -> None:
    assert asking_payload(_result(payload)) is None


BOOK = {"plan_id": {"type": "string"}}


def test_the_driver_of_an_asking_payload_is_chosen_from_its_fields() -> None:
    book = ToolInfo(
        "book",
        "",
        {"type": "object", "properties": {**BOOK, "ticket": {"type": "string"}}, "required": ["plan_id"]},
        False,
        False,
    )
    found = from_response(_result({"decision": "ASK", "ticket": "7f3a9c01d2", "plan_id": "p"}), book, [book])
    assert isinstance(found, Token)
    assert (found.into, found.token_from) == ("ticket", "ticket")

    plain = ToolInfo(
        "book", "", {"type": "object", "properties": BOOK, "required": ["plan_id"]}, False, False
    )
    execute = ToolInfo(
        "execute_booking", "", {"type": "object", "properties": {"ref": {"type": "string"}}}, False, False
    )
    found = from_response(_result({"pending_approval": True, "ref": "r-1"}), plain, [plain, execute])
    assert isinstance(found, Pending)
    assert found.id_from == "ref"
    assert found.execute is not None
    assert found.execute.tool == "execute_booking"

    flagged = ToolInfo(
        "book",
        "",
        {"type": "object", "properties": {**BOOK, "confirmed": {"type": "boolean"}}, "required": ["plan_id"]},
        False,
        False,
    )
    assert isinstance(from_response(_result({"needs_confirm": True}), flagged, [flagged]), Flag)
    assert from_response(_result({"needs_confirm": True}), plain, [plain]) is None


def test_a_word_the_payload_echoes_back_is_no_token_but_a_pending_id_is_a_pending_action() -> None:
    # A memory queued for the person: `vault` is an argument the result echoes, not a token.
    propose = ToolInfo(
        "propose",
        "",
        {
            "type": "object",
            "properties": {"content": {"type": "string"}, "vault": {"type": "string"}},
            "required": ["content"],
        },
        False,
        False,
    )
    payload = {"ok": True, "id": "mem_1796161799_4tac", "state": "pending", "vault": "current"}
    found = from_response(_result(payload), propose, [propose])
    assert isinstance(found, Pending), found


def test_the_decoy_of_a_phone_number_or_a_date_is_another_valid_one() -> None:
    from mcp_confirm_audit.engine.action import varied_args

    args = {"phone": "+12025550123", "date": "2030-01-31", "memo": "rent"}
    assert varied_args(args, 1) == {"phone": "+12025550124", "date": "2030-02-01", "memo": "rent-1"}


@pytest.mark.parametrize(
    ("name", "writes"),
    [
        ("content", True),
        ("noteBody", True),
        ("new_name", True),
        ("label", True),
        ("value", True),
        ("name", False),
        ("key", False),
        ("change_id", False),
        ("context", False),
        ("bed", False),
    ],
)
def test_what_an_action_writes_is_told_from_its_subject_by_the_arguments_name(
    name: str, writes: bool
) -> None:
    assert arguments.writes(name) is writes


def test_a_uses_mark_goes_only_on_the_harness_filler_of_what_it_writes_and_only_where_the_schema_takes_it() -> (
    None
):
    schema = {
        "properties": {
            "short_text": {"type": "string", "maxLength": 17},
            "slug_text": {"type": "string", "pattern": "^[a-z-]+$"},
        }
    }
    sent = {
        "content": FILLER,
        "body": "the operator's own words",
        "name": FILLER,
        "short_text": FILLER,
        "slug_text": FILLER,
        "fixed_text": FILLER,
    }
    marked = arguments.for_use(sent, "12", schema, fixed=("fixed_text",))
    assert marked == {**sent, "content": f"{FILLER} #12"}
    # Marked once: the same use marked again is the same use.
    assert arguments.for_use(marked, "12", schema, fixed=("fixed_text",)) == marked


@pytest.mark.parametrize(
    ("value", "own"),
    [
        (FILLER, True),
        (f"{FILLER}-2", True),
        (f"{FILLER}-2 #14", True),
        # The no-such-subject control's id that names nothing: never taken for a use's filler.
        (f"{FILLER}0000", False),
        ("chg_1f2e", False),
        (7, False),
    ],
)
def test_the_filler_a_use_is_given_is_told_from_values_that_name_nothing(value: object, own: bool) -> None:
    assert arguments.made_up(value) is own


def test_a_boolean_that_carries_the_decision_is_told_from_any_other() -> None:
    # `approve_command(command, approve)`: a boolean gets `false`, which said to an approve step is a no.
    assert value_for("approve", {"type": "boolean"}) is False
    assert decides("approve", {"type": "boolean"})
    assert decides("confirmed", {"anyOf": [{"type": "boolean"}, {"type": "null"}]})
    # Another switch, or a decision that is no boolean, is never a yes the harness says.
    assert not decides("persist", {"type": "boolean"})
    assert not decides("approve", {"type": "string"})
