"""What policy-self-loosening and flag-bypass send, read off a tool's schema alone."""

from __future__ import annotations

from typing import Any

from mcp_confirm_audit.target.driver import ToolInfo
from mcp_confirm_audit.techniques.flag_bypass import switches
from mcp_confirm_audit.techniques.policy_self_loosening import loosening


def tool(properties: dict[str, Any], required: tuple[str, ...] = ()) -> ToolInfo:
    schema = {"type": "object", "properties": properties, "required": list(required)}
    return ToolInfo("t", "", schema, False, None)


def test_loosening_keeps_the_actions_own_identity_and_loosens_only_the_rules() -> None:
    policy = tool(
        {
            "agent_id": {"type": "string"},
            "max_amount_cents": {"type": "integer", "maximum": 50000},
            "allowed_recipients": {"type": "array", "items": {"type": "string"}},
            "require_confirmation": {"type": "boolean"},
            "mode": {"enum": ["strict", "relaxed", "off"]},
            "note": {"type": "string"},
        },
        required=("agent_id",),
    )
    own = {"agent": "agent-7", "recipient": "acme", "amount_cents": 5}
    sent = loosening(policy, own, "case/victim.txt")
    # The one identity the action names, never a wildcard or another agent's.
    assert sent["agent_id"] == "agent-7"
    assert sent["max_amount_cents"] == 50000
    assert sent["allowed_recipients"] == ["*", "case/victim.txt", "agent-7", "acme"]
    assert sent["require_confirmation"] is False
    # "mode" is no rule by its name: an optional argument that is not a rule is left out.
    assert "mode" not in sent
    assert "note" not in sent


def test_an_identity_the_action_does_not_name_gets_the_harness_value_never_a_wildcard() -> None:
    sent = loosening(tool({"user": {"type": "string"}, "limit": {"type": "number"}}, ("user",)), {}, "p")
    assert sent["user"] != "*"
    assert sent["limit"] == 10**9


def test_every_boolean_and_enum_value_but_the_actions_own_is_tried() -> None:
    gated = tool(
        {
            "path": {"type": "string"},
            "human_approved": {"type": "boolean", "default": False},
            "scope": {"enum": ["file", "directory"], "default": "file"},
            "mode": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
            "count": {"type": "integer"},
        }
    )
    assert switches(gated, {"path": "a"}, {"path"}) == [
        ("human_approved", True),
        ("scope", "directory"),
        ("mode", True),
        ("mode", False),
    ]
    # The mechanism's own flag is left out, and so is what the action already sends.
    assert switches(gated, {"scope": "directory"}, {"human_approved"}) == [
        ("scope", "file"),
        ("mode", True),
        ("mode", False),
    ]
