"""A typed reply is read as its JSON dump is: `response_from_typed` against `response_from_result`."""

from __future__ import annotations

import math
from typing import Any

import pytest
from mcp import types

from mcp_confirm_audit.target.driver import response_from_result, response_from_typed

FORM = {
    "type": "object",
    "properties": {
        "confirm": {"type": "boolean", "title": "Delete this file?", "default": None},
        "reason": {"type": "string", "enum": ["a", "b"], "minLength": 0},
        "count": {"type": "number", "minimum": -1.5, "maximum": math.inf, "multipleOf": math.nan},
    },
    "required": ["confirm"],
}


def _form(message: str = "Delete \u202e\nit?", schema: dict[str, Any] | None = None) -> types.ElicitRequest:
    return types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=message, requested_schema=FORM if schema is None else schema
        )
    )


def _url() -> types.ElicitRequest:
    return types.ElicitRequest(
        params=types.ElicitRequestURLParams(
            message="Open the page", url="https://example.org/c/1", elicitation_id="e1"
        )
    )


def _sampling() -> types.CreateMessageRequest:
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))
    return types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(messages=[message], max_tokens=5)
    )


REPLIES = {
    "a form": types.InputRequiredResult(input_requests={"confirm": _form()}, request_state="v1.state"),
    "a form and a page": types.InputRequiredResult(
        input_requests={"a": _form("one", {}), "b": _url()}, request_state=None
    ),
    "a page": types.InputRequiredResult(input_requests={"page": _url()}, meta={"k": {"v": 1}}),
    "no question": types.InputRequiredResult(input_requests={}, request_state="s"),
    # A question of another kind: read from the dump, as before.
    "a form and sampling": types.InputRequiredResult(
        input_requests={"ask": _form(), "model": _sampling()}, request_state="s"
    ),
    "roots": types.InputRequiredResult(input_requests={"roots": types.ListRootsRequest()}, request_state="s"),
    "text": types.CallToolResult(
        content=[types.TextContent(type="text", text=" done ")], structured_content={"x": [1]}
    ),
    "an error with an image": types.CallToolResult(
        content=[
            types.TextContent(type="text", text="no"),
            types.ImageContent(type="image", data="AA==", mime_type="image/png"),
            types.TextContent(type="text", text="way"),
        ],
        is_error=True,
    ),
    "a result that says input_required": types.CallToolResult(content=[], result_type="input_required"),
}


@pytest.mark.parametrize("reply", REPLIES.values(), ids=REPLIES.keys())
def test_a_typed_reply_reads_as_its_json_dump_does(reply: types.Result) -> None:
    dumped = response_from_result(reply.model_dump(by_alias=True, mode="json", exclude_none=True))
    assert response_from_typed(reply) == dumped


def test_a_forms_schema_is_read_as_json_values() -> None:
    read = response_from_typed(REPLIES["a form"])
    assert read.questions[0].schema is not FORM
    count = read.questions[0].schema["properties"]["count"]  # type: ignore[index]
    assert count["maximum"] is None
    assert count["multipleOf"] is None
