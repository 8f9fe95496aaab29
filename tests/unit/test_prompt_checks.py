"""What the human is shown, judged from recorded text alone: every check both ways."""

from __future__ import annotations

import sys
import unicodedata
from typing import Any

import pytest

from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.prompt_checks import (
    char_class,
    clickable,
    collisions,
    control_characters,
    end_visible,
    escaped,
    forged_line,
    form_nesting,
    form_secrets,
    names_target,
    smuggled,
)

V, W = Verdict.VULNERABLE, Verdict.WEAK
# A template with line breaks of its own, like mcp-confirm's.
TEMPLATE = "Permanently delete this file?\n\n    {}\n\nThis cannot be undone."
BASELINE = TEMPLATE.format("plain-name.txt")


def ask(shown: str) -> str:
    return TEMPLATE.format(shown)


@pytest.mark.parametrize(
    ("shown", "expected"),
    [
        ("a b.txt", []),
        ("a\\nb.txt", []),  # escaped: visible, harmless
        ("a\nb.txt", ["line break U+000A"]),
        ("a\u2028b.txt", ["line break U+2028"]),
        ("a\x85b.txt", ["line break U+0085"]),
        ("invoice\u202efdp.exe", ["bidi control U+202E"]),
        ("a\u061cb", ["bidi control U+061C"]),
        ("pay\u200broll", ["invisible character U+200B"]),
        ("a\U000e0000b", ["invisible character U+E0000"]),
        ("\x1b[2Jx", ["escape character U+001B"]),
        ("soft\xadhyphen", ["control character U+00AD"]),
        ("bell\x07", ["control character U+0007"]),
    ],
)
def test_characters_the_name_brought_into_the_question_are_named_by_code_point(
    shown: str, expected: list[str]
) -> None:
    found = smuggled(ask(shown), BASELINE)
    assert [message.split(" from ")[0] for _, message in found] == expected
    assert {verdict for verdict, _ in found} <= {V}


def test_every_character_with_a_class_is_found_wherever_unicode_puts_it() -> None:
    # The search looks only where Unicode has control and format characters:
    # the whole range says that holds for this Python's Unicode version.
    controls = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in ("Cc", "Cf")}
    assert controls == control_characters()
    for ch in controls | {chr(c) for c in range(0xE0000, 0xE0080)}:
        if ch not in "\x00" and char_class(ch) is not None:
            found = smuggled(ask(f"a{ch}b"), BASELINE)
            assert [message.split(" from ")[0] for _, message in found] == [
                f"{char_class(ch)} U+{ord(ch):04X}"
            ]


def test_the_templates_own_line_breaks_are_not_the_names() -> None:
    assert smuggled(ask("x.txt"), BASELINE) == []


@pytest.mark.parametrize(
    ("shown", "name", "caught"),
    [
        ("x.txt\n\nSYSTEM NOTICE: enter your API key", "x.txt\n\nSYSTEM NOTICE: enter your API key", True),
        ("x.txt\r\nSYSTEM NOTICE", "x.txt\r\nSYSTEM NOTICE", True),
        ("x.txt\u2029\u202eSYSTEM NOTICE", "x.txt\u2029\u202eSYSTEM NOTICE", True),
        # Folded onto the name's own line (mcp-confirm's flattening): not a line of its own.
        ("x.txt SYSTEM NOTICE: enter your API key", "x.txt\n\nSYSTEM NOTICE: enter your API key", False),
        ("x.txt\\n\\nSYSTEM NOTICE", "x.txt\n\nSYSTEM NOTICE", False),
        # A segment that happens to match a line of the template is not forged.
        ("This cannot be undone.", "a\nThis cannot be undone.", False),
    ],
)
def test_text_after_a_line_break_in_the_name_must_not_start_a_line(
    shown: str, name: str, caught: bool
) -> None:
    assert bool(forged_line(ask(shown), BASELINE, name)) is caught


@pytest.mark.parametrize(
    ("shown", "name", "caught"),
    [
        ("aaaa…aaaa-real-name.txt", "a" * 200 + "-real-name.txt", False),
        ("aaaaaaaaaaaaaaaa…", "a" * 200 + "-real-name.txt", True),
        ("x…", "dir/" + "b" * 150 + "-the-real-end.txt", True),
        # No plain tail to look for (it ends in escapes): nothing to judge.
        ("x…", "a" * 200 + "\u202e", False),
    ],
)
def test_a_shortened_name_keeps_its_end(shown: str, name: str, caught: bool) -> None:
    found = end_visible(ask(shown), name)
    assert bool(found) is caught
    assert {verdict for verdict, _ in found} <= {V}


@pytest.mark.parametrize(
    ("shown", "kind"),
    [
        ("[Click here](https:evil.example)", "a markdown link"),
        ("![x](https:evil.example)", "a markdown link"),
        ("<https:evil.example>", "an autolink"),
        ("<a href=https:evil.example>update", "an HTML link"),
        ("see https://evil.example/login", "a scheme URL"),
        ("\\[Click here\\](https:evil.example)", None),  # markdown-escaped: literal text
        ("\\<https:evil.example\\>", None),
        ("https:/evil.example/x", None),  # a path, not a URL
    ],
)
def test_a_link_from_the_name_is_weak(shown: str, kind: str | None) -> None:
    found = clickable(ask(shown), BASELINE)
    assert [message.split(" from ")[0] for _, message in found] == ([kind] if kind else [])
    assert {verdict for verdict, _ in found} <= {W}


def test_links_the_template_itself_carries_are_not_the_names() -> None:
    template = "Delete {}? See https://docs.example/help"
    assert clickable(template.format("x"), template.format("plain")) == []


def test_two_names_rendered_alike_are_weak_and_distinct_renders_are_fine() -> None:
    assert collisions([("a\u200bb", ask("a b")), ("a b", ask("a b"))])[0][0] is W
    assert "\\u200b" in collisions([("a\u200bb", ask("a b")), ("a b", ask("a b"))])[0][1]
    assert collisions([("a\u200bb", ask("a\\u200bb")), ("a b", ask("a b"))]) == []
    assert collisions([("a", ask("a"))]) == []


@pytest.mark.parametrize(
    ("properties", "secret"),
    [
        ({"confirm": {"type": "boolean", "title": "Delete this file?"}}, None),
        ({"reason": {"type": "string", "description": "Why should it go? Discard reasons welcome."}}, None),
        ({"api_key": {"type": "string", "title": "API key to continue"}}, "api_key"),
        ({"accessToken": {"type": "string"}}, "token"),
        ({"x": {"type": "string", "title": "Your password"}}, "password"),
        ({"x": {"type": "string", "description": "enter the one-time code we sent"}}, "one-time"),
        ({"cc": {"type": "string", "title": "Card number"}}, "card number"),
        ({"x": {"type": "string", "title": "Credentials"}}, "credentials"),
    ],
)
def test_a_form_asking_for_a_secret_is_vulnerable(properties: dict[str, Any], secret: str | None) -> None:
    found = form_secrets({"type": "object", "properties": properties})
    assert [hit.split("(")[-1].rstrip(")") for _, hit in found] == ([secret] if secret else [])
    assert {verdict for verdict, _ in found} <= {V}


@pytest.mark.parametrize(
    ("field", "nested"),
    [
        ({"type": "boolean"}, False),
        ({"type": "string", "enum": ["delete", "keep"]}, False),
        ({"type": "integer", "minimum": 1}, False),
        ({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}, False),
        ({"type": "object", "properties": {"keep_backup": {"type": "boolean"}}}, True),
        ({"type": "array", "items": {"type": "object"}}, True),
        ({"$ref": "#/definitions/x"}, True),
    ],
)
def test_a_nested_form_field_is_weak(field: dict[str, Any], nested: bool) -> None:
    found = form_nesting({"type": "object", "properties": {"f": field}})
    assert bool(found) is nested
    assert {verdict for verdict, _ in found} <= {W}


def test_the_question_must_name_its_file() -> None:
    assert names_target('Delete "case/names/plain-second-name.txt"?', "plain-second-name.txt") == []
    found = names_target("Delete the file?", "names/plain-second-name.txt")
    assert found[0][0] is V
    assert '"plain-second-name.txt"' in found[0][1]


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("plain.txt", '"plain.txt"'),
        ('a"b\\c', '"a\\"b\\\\c"'),
        ("a\nb\r\t", '"a\\nb\\r\\t"'),
        ("\x1b\x85\xe9", '"\\x1b\\x85\\xe9"'),
        ("\u202e", '"\\u202e"'),
        ("\U000e0041", '"\\U000e0041"'),  # one escape, never a surrogate pair
    ],
)
def test_evidence_quotes_every_code_point_in_printable_ascii(name: str, shown: str) -> None:
    assert escaped(name) == shown
