"""One reading of a staging reply: what a flow reads a handle in stages the action, unless it refuses in words.

Each reply is one a real server gave its staging call (rei-automator-mcp 0.2.0a3, cmd-line-mcp 0.6.1,
ai-runtime-guard 1.5.0) or a reference server's refusal that carries an id besides.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from mcp_confirm_audit.confirmations import Pending, staging
from mcp_confirm_audit.confirmations.base import Preview
from mcp_confirm_audit.confirmations.pending import CallTemplate
from mcp_confirm_audit.models import Outcome, Response


def _json(said: dict[str, Any]) -> Response:
    return Response(Outcome.COMPLETE, json.dumps(said, indent=2))


EXECUTE = CallTemplate("execute_action", {"action_id": "{id}"})
REI = Pending(tool="propose_action", id_from="action_id", execute=EXECUTE, source="profile")
CMD = Pending(tool="execute_command", id_from="session_id", execute=EXECUTE, source="profile")
AIRG = Pending(
    tool="execute_command",
    id_pattern=re.compile(r"approval_token=([0-9a-f]+)"),
    execute=EXECUTE,
    source="profile",
)
DETECTED = Pending(tool="delete_file", execute=EXECUTE)

REI_STAGED = _json(
    {"action_id": "ram-10-17966", "kind": "shell_command", "label": "delete the file", "approved": False}
)
CMD_STAGED = _json(
    {
        "success": False,
        "output": "",
        "error": "Command 'rm a.txt' requires approval. Use approve_command_type tool with session_id 'agent-session'.",
        "requires_approval": True,
        "command_type": "write",
        "session_id": "agent-session",
    }
)
AIRG_STAGED = Response(
    Outcome.COMPLETE,
    "[POLICY BLOCK] Command 'rm' requires explicit confirmation before execution\n\n"
    "approval_token=9c86a2ebd9f94c8fa355be2d3bc9c835\ntoken_expires_at=2026-12-08T02:44:09Z",
)


@pytest.mark.parametrize(
    ("flow", "response", "handle"),
    [
        (REI, REI_STAGED, "ram-10-17966"),
        (CMD, CMD_STAGED, "agent-session"),
        (AIRG, AIRG_STAGED, "9c86a2ebd9f94c8fa355be2d3bc9c835"),
        # Detection's reading: the field named like an action id, a bare `ok: false` beside it.
        (DETECTED, _json({"ok": False, "pending_id": "p1"}), "p1"),
    ],
)
def test_a_reply_whose_refusal_field_only_says_not_approved_yet_is_staged(
    flow: Pending, response: Response, handle: str
) -> None:
    shown = staging.staged(flow, response)
    assert shown is not None
    assert shown.handle == handle
    assert staging.refused(flow.preview_of(response)) is None


@pytest.mark.parametrize(
    ("flow", "response", "why"),
    [
        # The confirm-kinds server's refusal of a file type: an id beside a refusal in words of its own.
        (
            DETECTED,
            _json({"status": "refused", "error": "file type not allowed: a.exe", "request_id": "r1"}),
            "status: refused",
        ),
        # cmd-line-mcp refusing a line it does not take: it hands out nothing.
        (
            CMD,
            _json({"success": False, "output": "", "error": "Command 'true' is not recognized"}),
            "success: false",
        ),
        # The same session echoed beside a refusal that asks for no approval.
        (
            CMD,
            _json({"success": False, "error": "Command contains control characters", "session_id": "s"}),
            "success: false",
        ),
        # An id beside a bare false that gives its reason.
        (REI, _json({"action_id": "a1", "approved": False, "reason": "kind not allowed"}), "approved: false"),
    ],
)
def test_a_reply_that_refuses_in_words_of_its_own_staged_nothing_whatever_id_it_carries(
    flow: Pending, response: Response, why: str
) -> None:
    assert staging.staged(flow, response) is None
    assert staging.refused(flow.preview_of(response)) == why


def test_a_reply_without_a_flow_to_read_it_staged_nothing() -> None:
    assert staging.staged(None, REI_STAGED) is None
    # A preview no flow read a handle in is read as replies.refusal reads any reply.
    assert staging.refused(Preview(REI_STAGED)) == "approved: false"
