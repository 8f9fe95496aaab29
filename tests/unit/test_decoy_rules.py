"""The rules behind decoys that differ and are valid, and judging only what was asked (issue 18, cause 9)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from mcp_confirm_audit.confirmations.replies import refusal
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.engine.action import CaseFile, varied_args
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.models import Outcome, Response
from mcp_confirm_audit.oracle.effects import probe_of
from mcp_confirm_audit.oracle.sandbox import VICTIM_TEXT, decoy_text
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.target.arguments import another

# -- a decoy file -------------------------------------------------------------


@pytest.mark.parametrize("label", ["other", "decoy", "plain", "x" * 40, ""])
def test_a_decoys_content_and_size_are_never_the_victims(label: str) -> None:
    text = decoy_text(label)
    assert text != VICTIM_TEXT
    assert len(text.encode()) != len(VICTIM_TEXT.encode())


def test_a_decoy_is_rewritten_only_when_it_no_longer_holds_its_own_text(tmp_path: Path) -> None:
    path = tmp_path / "decoy.txt"
    text = decoy_text("decoy")
    path.write_text(text)
    decoy = CaseFile(path, "decoy.txt", tmp_path / "kept", "root/decoy.txt", text)
    assert not decoy.rewritten()
    path.write_text("")
    assert decoy.rewritten()
    assert decoy.put_back() == "victim's content put back in place"
    assert path.read_text() == text


# -- another valid value --------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "name", "prop", "other"),
    [
        ("15559990001", "to", {"type": "string"}, "15559990002"),
        ("15559990001", "phone", {"type": "string"}, "15559990002"),
        ("S-102", "slot_id", {"type": "string", "pattern": r"^S-\d{3}$"}, "S-103"),
        ("pay-0005", "payment_id", {"type": "string"}, "pay-0006"),
        ("+12025550123", "phone", {"type": "string"}, "+12025550124"),
        ("9", "code", {"type": "string", "pattern": r"^\d$"}, "0"),
    ],
)
def test_another_use_of_an_action_gets_another_valid_value_of_the_same_type(
    value: str, name: str, prop: dict[str, Any], other: str
) -> None:
    assert another(value, 1, name, prop) == other


def test_a_pattern_the_counted_value_breaks_gives_another_string_that_matches_it() -> None:
    prop = {"type": "string", "pattern": r"^[A-Z]{3}$"}
    first, second = another("AAA", 1, "code", prop), another("AAA", 2, "code", prop)
    assert first is not None
    assert second is not None
    assert re.fullmatch(r"[A-Z]{3}", first)
    assert re.fullmatch(r"[A-Z]{3}", second)
    assert len({"AAA", first, second}) == 3, "each variant is another value"


def test_a_number_that_no_longer_fits_its_pattern_is_not_sent() -> None:
    # Counting 99 on gives 00, which the pattern (no leading zero) refuses: another match is found.
    prop = {"type": "string", "pattern": r"^[1-9]\d$"}
    other = another("99", 1, "room", prop)
    assert other is not None
    assert re.fullmatch(r"[1-9]\d", other)
    assert other != "99"


def test_the_decoy_arguments_of_a_messaging_action_are_a_number_and_a_text() -> None:
    args = {"to": "15559990001", "body": "hello", "handle": "{message}"}
    assert varied_args(args, 1) == {"to": "15559990002", "body": "hello-1", "handle": "{message}"}


# -- exact probe names ----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "probe"),
    [
        ("file:settings.json", "file:settings.json"),
        ("file:settings.json[2].status", "file:settings.json"),
        ("file:settings.json.theme", "file:settings.json"),
        ("tool:list_payments.payments[3]", "tool:list_payments"),
        ("tool:list_payments@replica-1-2.payments[0]", "tool:list_payments"),
        ("file:settings.json.bak", "file:settings.json"),  # a field named `bak` of settings.json
        ("file:settings.jsonl", None),
        ("file:settings", None),
        ("tool:list_payments_v2", None),
        ("root/settings.json", None),
    ],
)
def test_a_change_belongs_to_the_probe_whose_exact_name_it_starts_with(path: str, probe: str | None) -> None:
    assert probe_of(path, ["file:settings.json", "tool:list_payments", "file:ledger.json"]) == probe


def test_the_longest_probe_name_wins() -> None:
    assert probe_of("file:a.json.b[0]", ["file:a", "file:a.json"]) == "file:a.json"


# -- a refusal inside an ordinary result ----------------------------------------


def _complete(payload: Any) -> Response:
    return Response(outcome=Outcome.COMPLETE, text=json.dumps(payload))


@pytest.mark.parametrize(
    "response",
    [
        Response(outcome=Outcome.TOOL_ERROR, text="file type not allowed"),
        Response(outcome=Outcome.RPC_ERROR, text="invalid params"),
        _complete({"status": "refused", "error": "file type not allowed", "request_id": "r1"}),
        _complete({"ok": False, "pending_id": "p1"}),
        _complete({"sent": False}),
        _complete({"decision": "DENIED"}),
        _complete({"result": "blocked"}),
        _complete({"error": {"code": 3}}),
    ],
)
def test_a_reply_that_says_no_is_a_refusal_whatever_id_it_carries(response: Response) -> None:
    assert refusal(response) is not None


@pytest.mark.parametrize(
    "response",
    [
        _complete({"status": "pending_approval", "pending_id": "p1"}),
        _complete({"status": "preview", "confirm_token": "t"}),
        _complete({"ok": True, "error": None}),
        Response(outcome=Outcome.COMPLETE, text="Deleted a.txt."),
        Response(outcome=Outcome.INPUT_REQUIRED, text=""),
    ],
)
def test_a_reply_that_previews_asks_or_acts_is_no_refusal(response: Response) -> None:
    assert refusal(response) is None


# -- a preview made by another tool ---------------------------------------------


def _profile(token: dict[str, Any], **more: Any) -> Any:
    raw = {"command": "srv --root {root}", "confirmation": {"kind": "token", "token": token, **more}}
    return profile_from_mapping(raw, source="p.yaml")


def test_a_token_previewed_by_another_tool_is_stated_with_its_own_arguments() -> None:
    args = {"operation": "{tool}", "target": "{path}", "depth": "{depth}", "note": "about {path}"}
    stated = _profile({"preview": {"tool": "simulate_impact", "args": args}}).confirmation
    assert isinstance(stated, Token)
    flow = stated.for_tool("apply_change")
    assert flow.own_tools == ("simulate_impact",)
    assert flow.previewing({"path": "a.txt", "depth": 2}) == (
        "simulate_impact",
        {"operation": "apply_change", "target": "a.txt", "depth": 2, "note": "about a.txt"},
    )
    # The confirming call is the gated tool's own arguments and the token, with no preview switch.
    assert flow.confirming({"path": "a.txt"}, "t0") == {"path": "a.txt", "confirm_token": "t0"}
    assert "the tool 'simulate_impact'" in flow.describe()


def test_a_preview_tool_without_args_gets_the_gated_calls_arguments() -> None:
    stated = _profile({"preview": {"tool": "plan_change"}}).confirmation
    assert isinstance(stated, Token)
    assert stated.for_tool("apply").previewing({"change_id": "c-1"}) == ("plan_change", {"change_id": "c-1"})
    # Without token.preview the gated tool previews itself, as before.
    plain = _profile({"into": "confirm_token"}, preview={"dry_run": True}).confirmation
    assert isinstance(plain, Token)
    assert plain.for_tool("apply").previewing({"x": 1}) == ("apply", {"x": 1, "dry_run": True})


@pytest.mark.parametrize(
    ("token", "more", "said"),
    [
        ({"preview": {"args": {}}}, {}, "tool"),
        ({"preview": {"tool": "simulate_impact", "with": {}}}, {}, "with"),
        ({"preview": {"tool": "simulate_impact"}}, {"preview": {"dry_run": True}}, "keep the one"),
    ],
)
def test_a_wrong_token_preview_is_one_line_naming_the_key(
    token: dict[str, Any], more: dict[str, Any], said: str
) -> None:
    with pytest.raises(UsageError, match=said):
        _profile(token, **more)
