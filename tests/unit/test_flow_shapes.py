"""Flows recognised by their shape (issue 30): a challenge echoed back, or one that must come back signed."""

from __future__ import annotations

from mcp_confirm_audit.confirmations.detect import (
    approval_argument,
    asking_payload,
    from_response,
    from_schemas,
    preview_tool,
    signed_challenge,
)
from mcp_confirm_audit.confirmations.flag import Flag
from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.models import Outcome, Response
from mcp_confirm_audit.target.driver import ToolInfo

CHALLENGE = Response(Outcome.COMPLETE, text='{"ok": false, "challenge": "c0ffee1234"}')


def _tool(*args: str) -> ToolInfo:
    props = {"tank": {"type": "string"}, **{a: {"type": "string"} for a in args}}
    return ToolInfo(
        "drain_tank", "", {"type": "object", "properties": props, "required": ["tank"]}, None, None
    )


def test_a_challenge_is_echoed_in_the_argument_of_its_name() -> None:
    echoed = from_response(CHALLENGE, _tool("challenge"), [])
    assert isinstance(echoed, Token)
    assert (echoed.into, echoed.token_from) == ("challenge", "challenge")
    assert signed_challenge(CHALLENGE, _tool("challenge")) is None


def test_a_challenge_that_must_come_back_signed_names_the_key_that_fixes_it() -> None:
    assert from_response(CHALLENGE, _tool("signature"), []) is None
    fix = signed_challenge(CHALLENGE, _tool("signature"))
    assert fix is not None
    assert "must come back signed in 'signature'" in fix
    assert "human: [{sign: ...}]" in fix


def test_a_challenge_the_server_signed_itself_goes_back_whole_in_the_signature() -> None:
    sealed = Response(
        Outcome.COMPLETE, text='{"ok": false, "challenge": "flush:drip:9f3a01.4be1c0ffee1234567890abcd"}'
    )
    found = from_response(sealed, _tool("signature"), [])
    assert isinstance(found, Token)
    assert (found.into, found.token_from) == ("signature", "challenge")
    assert signed_challenge(sealed, _tool("signature")) is None
    # A bare nonce in a signature is for a key the person holds: never echoed as if it were signed.
    assert from_response(CHALLENGE, _tool("signature"), []) is None


def test_a_token_beside_ok_false_is_asking_not_refusing() -> None:
    said = Response(
        Outcome.COMPLETE, text='{"ok": false, "needs_confirm": true, "confirm_token": "t0ken1234abcd"}'
    )
    assert asking_payload(said) == "needs_confirm: true"
    found = from_response(said, _tool("confirm_token"), [])
    assert isinstance(found, Token)
    assert found.into == "confirm_token"


def _described(name: str, description: str, required: tuple[str, ...] = (), **props: str) -> ToolInfo:
    schema = {
        "type": "object",
        "properties": {k: {"type": v} for k, v in props.items()},
        "required": list(required),
    }
    return ToolInfo(name, description, schema, None, None)


def test_a_required_token_is_handed_out_by_the_tool_the_descriptions_name() -> None:
    send = _described(
        "send_email", "Send the email rendered by preview_email.", ("confirm_token",), confirm_token="string"
    )
    preview = _described("preview_email", "Render it; returns a confirm_token.", ("to",), to="string")
    listing = _described("list_templates", "The templates.")
    found = from_schemas(send, None, [listing, preview, send])
    assert isinstance(found, Token)
    assert (found.preview_tool, found.into, found.token_from) == (
        "preview_email",
        "confirm_token",
        "confirm_token",
    )
    # An optional token is the tool's own preview's (it answers without one): no other tool is looked for.
    own = _described("send_email", "Send the email rendered by preview_email.", (), confirm_token="string")
    mine = from_schemas(own, None, [preview, own])
    assert isinstance(mine, Token)
    assert mine.preview_tool is None
    # Nothing names the token or the tool: no preview tool is made up.
    assert preview_tool(send, "confirm_token", [listing, send]) is None


def test_a_confirm_switch_named_for_its_action_is_a_flag() -> None:
    send = ToolInfo(
        "sms_alert",
        "",
        {
            "type": "object",
            "properties": {"message": {"type": "string"}, "confirm_send": {"type": "boolean"}},
        },
        None,
        None,
    )
    said = Response(
        Outcome.COMPLETE, text='{"sent": false, "error": "confirmation is required (confirm_send=true)"}'
    )
    assert approval_argument(send) == "confirm_send"
    found = from_response(said, send, [send])
    assert isinstance(found, Flag)
    assert found.arg == "confirm_send"


def test_an_id_beside_a_status_that_says_it_acted_is_no_pending_action() -> None:
    tool = _tool("content")
    applied = Response(
        Outcome.COMPLETE, text='{"proposal_id": "p1a24aff", "status": "applied", "memory_id": "1ap9v"}'
    )
    assert from_response(applied, tool, [tool]) is None
    waiting = Response(
        Outcome.COMPLETE, text='{"proposal_id": "p1a24aff", "status": "pending", "hold": "approval"}'
    )
    assert isinstance(from_response(waiting, tool, [tool]), Pending)


def test_a_waiting_draft_names_its_id_and_the_approve_call_carries_the_phrase_it_states() -> None:
    stage = _described("order_seed", "Stage an order.", ("crop",), crop="string")
    confirm = _described(
        "confirm_write", "Place it.", ("draft_id", "confirmation"), draft_id="string", confirmation="string"
    )
    said = Response(
        Outcome.COMPLETE,
        text='{"draft_id": "9f3a01be77", "status": "AWAITING CONFIRMATION - nothing ordered", '
        '"confirmation_phrase_required": "CONFIRM 9f3a01be"}',
    )
    found = from_response(said, stage, [stage, confirm])
    assert isinstance(found, Pending)
    assert found.id_from == "draft_id"
    assert found.approve is not None
    assert dict(found.approve.args) == {
        "draft_id": "{id}",
        "confirmation": "{confirmation_phrase_required}",
    }
    # Each staged id keeps what its staging result said: the approve call carries that phrase back.
    staged = {"confirmation_phrase_required": "CONFIRM 9f3a01be"}
    assert found.approve.filled("9f3a01be77", staged) == {
        "draft_id": "9f3a01be77",
        "confirmation": "CONFIRM 9f3a01be",
    }
    # The same id beside a status that does not say it waits is no pending action.
    done = Response(Outcome.COMPLETE, text='{"draft_id": "9f3a01be77", "status": "saved"}')
    assert not isinstance(from_response(done, stage, [stage, confirm]), Pending)
