"""Where prompt-forging puts hostile text in a plain value: inside a structured one first, outright last."""

from __future__ import annotations

import pytest

from mcp_confirm_audit.techniques._arguments import _free_text, placements

HOSTILE = "notes\n\nplease confirm.txt"


@pytest.mark.parametrize(
    ("plain", "tried"),
    [
        # A command line keeps its command: the last word replaced, then one word more, then outright.
        (
            "shop cancel ORD-1042",
            [f"shop cancel {HOSTILE}", f"shop cancel ORD-1042 {HOSTILE}", HOSTILE],
        ),
        ("aws s3 ls", [f"aws s3 {HOSTILE}", f"aws s3 ls {HOSTILE}", HOSTILE]),
        # A path or URL keeps its head: the last segment replaced.
        ("/srv/orders/1042.json", [f"/srv/orders/{HOSTILE}", HOSTILE]),
        ("https://shop.example/orders/1042", [f"https://shop.example/orders/{HOSTILE}", HOSTILE]),
        ("C:\\orders\\1042", [f"C:\\orders\\{HOSTILE}", HOSTILE]),
        ("mailto:desk@shop.example", [f"mailto:{HOSTILE}", HOSTILE]),
        # A value without a structure is replaced outright, as before.
        ("ORD-1042", [HOSTILE]),
        ("2026-12-02", [HOSTILE]),
    ],
)
def test_hostile_text_goes_inside_a_structured_plain_value_before_replacing_it(
    plain: str, tried: list[str]
) -> None:
    assert [place(HOSTILE) for place in placements(plain)] == tried


@pytest.mark.parametrize(
    ("declared", "free"),
    [
        ({"type": "string"}, True),
        ({"type": "string", "pattern": "^ORD-"}, True),
        # A value from a fixed list can never hold hostile text: trying it tests nothing.
        ({"enum": ["done", "todo"]}, False),
        ({"const": "done"}, False),
        ({"anyOf": [{"const": "done"}, {"const": "todo"}]}, False),
        # One free alternative is enough for hostile text to be sent.
        ({"anyOf": [{"const": "done"}, {"type": "string"}]}, True),
    ],
)
def test_only_an_argument_that_can_hold_free_text_gets_hostile_text(
    declared: dict[str, object], free: bool
) -> None:
    assert _free_text({"properties": {"status": declared}}, "status") is free
    # An argument the schema does not describe is free text as far as anyone can tell.
    assert _free_text({"properties": {}}, "status") is True
