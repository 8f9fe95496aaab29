"""ungated: which arguments of another tool take the id the gated call staged (index-memory-vault, trial 13).

`save_memory` answers `{"saved": {"id": ...}}` and the profile says `id_from: saved.id`: a bare `id` that
names no kind. The server's `approve_memory(memory_id)` and `get_memory(memory_id)` take that id under
the gated tool's noun, and were once sent the harness's filler (`"mcp-confirm-audit"`), whose "not
found" said nothing. An argument named for another kind of thing (`user_id`) is no guess of it.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.target.driver import ToolInfo
from mcp_confirm_audit.techniques.ungated import _staged_id_names, _takes_id


def _tool(*arguments: str) -> ToolInfo:
    schema = {"type": "object", "properties": {a: {"type": "string"} for a in arguments}}
    return ToolInfo("other", "", schema, None, None)


def _names(id_from: str) -> Any:
    plan = SimpleNamespace(name="save_memory", mechanism=Pending("save_memory", id_from=id_from))
    return _staged_id_names(SimpleNamespace(plan=plan))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("arguments", "taken"),
    [
        (("memory_id", "note"), ["memory_id"]),
        (("memoryId",), ["memoryId"]),
        (("id",), ["id"]),
        (("user_id",), []),
    ],
)
def test_a_bare_id_is_taken_under_the_gated_tools_noun(arguments: tuple[str, ...], taken: list[str]) -> None:
    assert _takes_id(_tool(*arguments), _names("saved.id")) == taken


def test_a_named_id_is_taken_only_under_its_name() -> None:
    assert _takes_id(_tool("memory_id", "ref"), _names("ref")) == ["ref"]
