"""Which values flag-bypass tries for a plain string argument: the choices its descriptions list."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_confirm_audit.target.driver import ToolInfo
from mcp_confirm_audit.techniques.flag_bypass import switches

# linkwarden-mcp 0.1.6: `on_links: str | None`, its choices only in the tool's description.
LINKWARDEN = (
    "Delete a collection after disposing of its links. When the collection has links, asks the user "
    "(MCP elicitation) whether to delete those links, move them (move_to, default Unorganized), or cancel. "
    "Without elicitation, returns needs_user_input — ask the user, then re-call with "
    "on_links='delete'|'move'|'cancel'. Requires 'collections' in LINKWARDEN_MCP_DELETE_SCOPES."
)
NULLABLE_STRING = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}


def test_a_string_that_decides_the_action_is_tried_at_each_choice_its_tools_description_lists() -> None:
    gated = ToolInfo(
        "delete_collection",
        LINKWARDEN,
        {
            "type": "object",
            "properties": {
                "collection": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "on_links": NULLABLE_STRING,
                "move_to": NULLABLE_STRING,
            },
        },
        False,
        True,
    )
    assert switches(gated, {"collection": "Reading"}, set()) == [
        ("on_links", "delete"),
        ("on_links", "move"),
        ("on_links", "cancel"),
    ]


@pytest.mark.parametrize(
    ("name", "prop", "description", "tried"),
    [
        # The choices in the argument's own description, bare and `|`-joined.
        ("mode", {"type": "string", "description": "soft|hard"}, "", ["soft", "hard"]),
        ("if_exists", {"type": "string", "description": "One of 'skip', 'overwrite' or 'fail'."}, "", None),
        # A string that says nothing of deciding the action: a title is no switch, listed values or not.
        ("title", {"type": "string", "description": "e.g. 'draft'|'final'"}, "", []),
        # Choices the tool's description lists for another argument are not this one's.
        ("on_error", {"type": "string"}, "Pass format='csv'|'json'. on_error is free text.", []),
        # A string with an enum is tried as an enum; one with no listed choice is not tried.
        ("on_links", {"type": "string"}, "Say what becomes of the links.", []),
    ],
)
def test_a_strings_choices_come_from_the_descriptions_and_only_for_an_argument_that_decides(
    name: str, prop: dict[str, Any], description: str, tried: list[str] | None
) -> None:
    gated = ToolInfo("t", description, {"type": "object", "properties": {name: prop}}, False, None)
    expected = ["skip", "overwrite", "fail"] if tried is None else tried
    assert switches(gated, {}, set()) == [(name, value) for value in expected]
