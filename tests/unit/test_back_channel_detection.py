"""Zero configuration audits a tool again over a legacy connection when 2026-07-28 had no back channel for it."""

from __future__ import annotations

import json

from mcp_confirm_audit.confirmations.elicitation import needs_back_channel
from mcp_confirm_audit.models import Outcome, Response

NO_BACK_CHANNEL = "Cannot send 'elicitation/create': this transport context has no back-channel for server-initiated requests."


def test_a_tool_that_catches_the_sdks_error_and_refuses_in_an_ordinary_result_needs_the_back_channel() -> (
    None
):
    # Seen on a real server (an SDK 2.x build): its approval step caught the SDK's error and
    # answered {"approved": false, "denied_reason": "approval prompt failed: ..."}.
    reply = {
        "approved": False,
        "outcome": "denied",
        "denied_reason": f"approval prompt failed: {NO_BACK_CHANNEL}",
    }
    assert needs_back_channel(Response(Outcome.COMPLETE, json.dumps(reply)))


def test_the_sdks_own_error_and_a_framework_tool_error_still_do() -> None:
    assert needs_back_channel(Response(Outcome.TOOL_ERROR, f"Error executing tool wake: {NO_BACK_CHANNEL}"))
    assert needs_back_channel(Response(Outcome.RPC_ERROR, "elicitation needs a back channel", code=-32600))


def test_an_ordinary_result_that_only_mentions_a_back_channel_does_not() -> None:
    # No refusal: a tool whose normal output talks about back channels has not failed for want of one.
    reply = {"ok": True, "note": "configured the back-channel relay"}
    assert not needs_back_channel(Response(Outcome.COMPLETE, json.dumps(reply)))
