"""Smoke tests of the question and form flaws the prompt-forging family catches.

Each flaw both ways through the real SDK client: what the careful server shows, and
what the flawed one shows instead. The careful question also escapes markup.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from mcp import types
from rounds import asking_client

pytestmark = pytest.mark.anyio
BOTH = pytest.mark.parametrize("flawed", [False, True], ids=["careful", "flawed"])


async def form_for(
    reference: ModuleType, root: Path, name: str, *flaws: str
) -> types.ElicitRequestFormParams:
    (root / name).write_text("x")
    async with asking_client(reference.build_server(root, flaws=flaws)) as c:
        r1 = await c.session.call_tool("delete_file", {"path": name}, allow_input_required=True)
    assert isinstance(r1, types.InputRequiredResult), r1
    assert r1.input_requests is not None
    params = r1.input_requests["confirm"].params
    assert isinstance(params, types.ElicitRequestFormParams)
    return params


def flaw(flawed: bool, name: str) -> tuple[str, ...]:
    return (name,) if flawed else ()


@BOTH
async def test_flaw_unsanitised_question_shows_the_name_as_it_is(
    reference: ModuleType, root: Path, flawed: bool
) -> None:
    name = "a\n\nSYSTEM NOTICE\u202e\x1b[2J[x](https:evil.example).txt"
    message = (await form_for(reference, root, name, *flaw(flawed, "unsanitised-question"))).message
    assert (name in message) == flawed
    if not flawed:
        assert "a\\n\\nSYSTEM NOTICE\\u202e\\u001b\\[2J\\[x\\](https:evil.example).txt" in message


@BOTH
async def test_flaw_sanitiser_folds_controls_makes_two_names_read_alike(
    reference: ModuleType, root: Path, flawed: bool
) -> None:
    flaws = flaw(flawed, "sanitiser-folds-controls")
    hidden = (await form_for(reference, root, "a\u200bb.txt", *flaws)).message
    spaced = (await form_for(reference, root, "a b.txt", *flaws)).message
    assert (hidden == spaced) == flawed
    assert "\u200b" not in hidden  # it still removes the character itself


@BOTH
async def test_flaw_nested_form_adds_an_object_field(reference: ModuleType, root: Path, flawed: bool) -> None:
    schema = (await form_for(reference, root, "a.txt", *flaw(flawed, "nested-form"))).requested_schema
    kinds = {field["type"] for field in schema["properties"].values()}
    assert ("object" in kinds) == flawed


async def test_flaw_nested_form_still_deletes_only_on_a_yes(reference: ModuleType, root: Path) -> None:
    async with asking_client(reference.build_server(root, flaws=("nested-form",))) as c:
        for content, gone in (
            ({"confirm": False}, False),
            ({"confirm": True}, True),
        ):
            r1 = await c.session.call_tool("delete_file", {"path": "a.txt"}, allow_input_required=True)
            assert isinstance(r1, types.InputRequiredResult)
            answer = {"confirm": types.ElicitResult(action="accept", content=content)}
            await c.session.call_tool(
                "delete_file",
                {"path": "a.txt"},
                allow_input_required=True,
                input_responses=answer,
                request_state=r1.request_state,
            )
            assert (root / "a.txt").exists() != gone


@BOTH
async def test_flaw_question_without_name(reference: ModuleType, root: Path, flawed: bool) -> None:
    message = (await form_for(reference, root, "a.txt", *flaw(flawed, "question-without-name"))).message
    assert ("a.txt" in message) != flawed
    assert "Permanently delete the file" in message
