"""Smoke tests of the careful server written in other styles (`--style`), through the real SDK client.

Each style says the same things differently: how a name is escaped and quoted,
and, for `own-ledger`, what a spent or declined confirmation is told.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from mcp import types
from rounds import ask, asking_client, decline, redeem, text

pytestmark = pytest.mark.anyio


async def message_for(reference: ModuleType, root: Path, name: str, style: str, *flaws: str) -> str:
    (root / name).write_text("x")
    async with asking_client(reference.build_server(root, style=style, flaws=flaws)) as c:
        r1 = await ask(c, {"path": name})
    assert r1.input_requests is not None
    params = r1.input_requests["confirm"].params
    assert isinstance(params, types.ElicitRequestFormParams)
    return params.message


@pytest.mark.parametrize(
    ("style", "name", "shown"),
    [
        ("markdown-escaped", "hl1-8_.txt", "**hl1\\-8\\_\\.txt**"),
        ("markdown-escaped", "pay\u200broll*.txt", "**pay<U+200B>roll\\*\\.txt**"),
        ("markdown-escaped", "<U+200B>.txt", "**\\<U\\+200B\\>\\.txt**"),  # a literal stand-in stays literal
        ("markdown-escaped", "a\u3164\ufe0fb.txt", "**a<U+3164><U+FE0F>b\\.txt**"),
        ("code-span", "[x](https:evil.example).txt", "`[x](https:evil.example).txt`"),
        ("code-span", "a``b`.txt", "```a``b`.txt```"),
        ("code-span", "`a.txt", "`` `a.txt ``"),
        ("code-span", "a\u202eb\\.txt", "`a\\u{202E}b\\\\.txt`"),
        ("own-ledger", "a\u180bb.txt", '"a\\u180bb.txt"'),
    ],
)
async def test_each_style_shows_a_name_its_own_way_and_escapes_what_hides(
    reference: ModuleType, root: Path, style: str, name: str, shown: str
) -> None:
    assert shown in await message_for(reference, root, name, style)


@pytest.mark.parametrize("style", ["quoted", "markdown-escaped", "code-span", "own-ledger"])
async def test_every_style_escapes_hangul_fillers_and_variation_selectors_unless_flawed(
    reference: ModuleType, root: Path, style: str
) -> None:
    name = "pay\u3164roll\ufe0f.txt"
    assert "\u3164" not in await message_for(reference, root, name, style)
    flawed = await message_for(reference, root, name, style, "sanitiser-category-only")
    assert {"\u3164", "\ufe0f"} <= set(flawed)  # FLAW: a letter and a mark, not a control


async def test_own_ledger_refuses_in_words_of_its_own(reference: ModuleType, root: Path) -> None:
    async with asking_client(reference.build_server(root, style="own-ledger")) as c:
        r1 = await ask(c, {"path": "a.txt"})
        declined = await decline(c, {"path": "a.txt"}, r1.request_state)
        assert isinstance(declined, types.CallToolResult)
        assert declined.is_error
        assert text(declined).endswith("Request declined by operator.")
        replayed = await redeem(c, {"path": "a.txt"}, r1.request_state)
        assert text(replayed).endswith("That confirmation has been consumed.")
        assert (root / "a.txt").exists()
        r1 = await ask(c, {"path": "a.txt"})
        done = await redeem(c, {"path": "a.txt"}, r1.request_state)
        assert not isinstance(done, types.InputRequiredResult)
        assert not done.is_error
        assert not (root / "a.txt").exists()


async def test_own_ledger_with_the_no_ledger_flaw_honours_a_ticket_twice(
    reference: ModuleType, root: Path
) -> None:
    async with asking_client(reference.build_server(root, style="own-ledger", flaws=("no-ledger",))) as c:
        r1 = await ask(c, {"path": "a.txt"})
        await decline(c, {"path": "a.txt"}, r1.request_state)
        await redeem(c, {"path": "a.txt"}, r1.request_state)
    assert not (root / "a.txt").exists()


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"style": "fancy"}, "unknown style"),
        ({"style": "own-ledger", "ledger": "sqlite:x.db"}, "tickets of its own"),
        ({"style": "own-ledger", "flaws": ("check-then-delete-ledger",)}, "tickets of its own"),
        ({"style": "own-ledger", "state": "signed"}, "tickets of its own"),
        ({"style": "own-ledger", "shared_key": bytes(32)}, "tickets of its own"),
    ],
)
def test_a_style_that_cannot_be_combined_says_so(
    reference: ModuleType, root: Path, options: dict[str, object], error: str
) -> None:
    with pytest.raises(ValueError, match=error):
        reference.build_server(root, **options)
