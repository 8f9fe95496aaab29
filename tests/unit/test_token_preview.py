"""Where a token flow's preview hands out its token: a field named like one, else the argument's own name."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.models import Outcome, Response


class OneReply:
    """The agent's connection as a token flow sees it, answering every call with one result."""

    def __init__(self, result: Mapping[str, Any]) -> None:
        self.result = result
        self.sent: list[tuple[str, Mapping[str, Any]]] = []

    async def call(self, label: str, tool: str, arguments: Mapping[str, Any]) -> Response:
        self.sent.append((tool, arguments))
        return Response(Outcome.COMPLETE, json.dumps(self.result), structured=self.result)

    async def human(self, label: str, steps: Sequence[Any], values: Mapping[str, str]) -> dict[str, str]:
        raise AssertionError("no person in these flows")


def previewed(flow: Token, result: Mapping[str, Any]) -> tuple[str | None, str | None]:
    async def go() -> tuple[str | None, str | None]:
        shown = await flow.preview(OneReply(result), {"header": "notes"})
        return shown.handle, shown.field

    return anyio.run(go)


def test_a_token_handed_back_under_the_arguments_own_name_is_the_token() -> None:
    # A spreadsheet server: "repeat the call with confirm=<token from that preview>", and its dry run
    # answers {"confirm": "cdb4ea4772a3", ...}: no field is named like a token, the argument's name is.
    flow = Token("add_column", into="confirm", preview_args={"dry_run": True}, source="offered")
    assert previewed(flow, {"dry_run": True, "confirm": "cdb4ea4772a3", "note": "dry run"}) == (
        "cdb4ea4772a3",
        "confirm",
    )


def test_a_field_named_like_a_token_still_comes_first() -> None:
    flow = Token("add_column", into="confirm", preview_args={"dry_run": True})
    assert previewed(flow, {"confirm": "x" * 12, "confirm_token": "t0k3n-1234"}) == (
        "t0k3n-1234",
        "confirm_token",
    )


def test_a_named_field_is_never_second_guessed() -> None:
    flow = Token("add_column", into="confirm", token_from="nonce", preview_args={"dry_run": True})
    assert previewed(flow, {"confirm": "cdb4ea4772a3"}) == (None, None)
