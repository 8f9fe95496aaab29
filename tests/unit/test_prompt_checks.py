"""What the human is shown, judged from recorded text alone: every check both ways."""

from __future__ import annotations

import io
import sys
import unicodedata
from functools import cache
from typing import Any

import pytest
import regex
from rich.console import Console

from mcp_confirm_audit.catalogue.characters import (
    CONTROL_PLANES,
    bidi_controls,
    char_class,
    control_characters,
    default_ignorable,
)
from mcp_confirm_audit.catalogue.prompt_checks import (
    clickable,
    collisions,
    end_visible,
    escaped,
    forged_line,
    form_nesting,
    form_secrets,
    message_problems,
    names_target,
    shown_whole,
    smuggled,
)
from mcp_confirm_audit.catalogue.question_text import as_read, terminal_as_shown
from mcp_confirm_audit.models import Verdict

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
        ("soft\xadhyphen", ["invisible character U+00AD"]),
        ("bell\x07", ["control character U+0007"]),
        ("a\ufffbb", ["control character U+FFFB"]),  # Cf, yet not default-ignorable
        # Letters and marks that render as nothing: a category check lets them through.
        ("a\u3164b", ["invisible character U+3164"]),  # HANGUL FILLER (Lo)
        ("a\u115fb", ["invisible character U+115F"]),  # HANGUL CHOSEONG FILLER (Lo)
        ("heart\ufe0f", ["invisible character U+FE0F"]),  # VARIATION SELECTOR-16 (Mn)
        ("a\U000e0100b", ["invisible character U+E0100"]),  # VARIATION SELECTOR-17 (Mn)
        ("a\u034fb", ["invisible character U+034F"]),  # COMBINING GRAPHEME JOINER (Mn)
        ("a\u180bb", ["invisible character U+180B"]),  # MONGOLIAN FREE VARIATION SELECTOR ONE (Mn)
    ],
)
def test_characters_the_name_brought_into_the_question_are_named_by_code_point(
    shown: str, expected: list[str]
) -> None:
    found = smuggled(ask(shown), BASELINE)
    assert [message.split(" from ")[0] for _, message in found] == expected
    assert {verdict for verdict, _ in found} <= {V}


@cache
def _every_code_point() -> str:
    """Every code point but the surrogates: built when a test asks (not in each process that collects)."""
    return "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF)


@cache
def _default_ignorable() -> frozenset[str]:
    return frozenset(regex.findall(r"\p{Default_Ignorable_Code_Point}", _every_code_point()))


@cache
def _bidi_control() -> frozenset[str]:
    return frozenset(regex.findall(r"\p{Bidi_Control}", _every_code_point()))


def _expected_class(ch: str) -> str | None:
    """The class from Unicode's own data, straight from the definitions, for one code point."""
    if len(f"a{ch}b".splitlines()) == 2:
        return "line break"
    if ch in _bidi_control():
        return "bidi control"
    if ch in "\x1b\x9b":
        return "escape character"
    if ch in _default_ignorable():
        return "invisible character"
    if unicodedata.category(ch) in ("Cc", "Cf"):
        return "control character"
    return None


def test_the_dangerous_class_is_unicodes_own_data_at_every_code_point() -> None:
    classified = {ch: kind for ch in _every_code_point() if (kind := _expected_class(ch)) is not None}
    assert {ch: char_class(ch) for ch in classified} == classified
    # The one regular expression finds exactly those, and nothing else, anywhere in Unicode.
    found = set(smuggled(ask(_every_code_point()), BASELINE))
    assert {message.split(" from ")[0] for _, message in found} == {
        f"{kind} U+{ord(ch):04X}" for ch, kind in classified.items()
    }
    # The scans look where Unicode has these characters: planes 0, 1 and 14.
    assert {ch for ch in classified if ord(ch) >= 0x20000} <= {chr(c) for c in CONTROL_PLANES[1]}
    assert control_characters() == {
        ch for ch in _every_code_point() if unicodedata.category(ch) in ("Cc", "Cf")
    }
    assert default_ignorable() == _default_ignorable() - _bidi_control()
    assert bidi_controls() == _bidi_control()


def test_no_printable_ascii_character_is_dangerous() -> None:
    # `smuggled` passes over a printable ASCII question without searching it.
    printable = [chr(code) for code in range(0x80) if chr(code).isprintable()]
    assert len(printable) == 0x7F - 0x20
    assert [ch for ch in printable if _expected_class(ch) is not None or char_class(ch) is not None] == []


def test_the_property_data_is_not_newer_than_this_pythons_unicode() -> None:
    # `regex` ships its own Unicode tables: every default-ignorable code point they
    # know as assigned, this Python knows too, with the same general category.
    for ch in _default_ignorable():
        for category in ("Cf", "Mn", "Lo", "Cn"):
            assert bool(regex.match(rf"\p{{gc={category}}}", ch)) is (unicodedata.category(ch) == category)


def test_letters_and_marks_that_render_as_nothing_are_in_the_class() -> None:
    assert {"\u115f", "\u1160", "\u3164", "\uffa0"} <= default_ignorable()  # Hangul fillers
    assert {chr(c) for c in [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]} <= default_ignorable()
    assert {"\u034f", "\u180b", "\u180c", "\u180d", "\u180f"} <= default_ignorable()


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
        # The name's line starts as the template's does: that start is the template's own.
        ("x\\nPermanently delete", "x\nPermanently delete", False),
        ("x\\nDelete", "x\nDelete", False),
        ("x\nDelete it all, said the admin", "x\nDelete it all, said the admin", True),
    ],
)
def test_a_line_the_template_starts_the_same_way_is_not_forged(shown: str, name: str, caught: bool) -> None:
    template = 'Delete "{}"? Tick the box.'
    assert bool(forged_line(template.format(shown), template.format("plain-name.txt"), name)) is caught


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
    ("shown", "name", "caught"),
    [
        ('Delete "names/sk-quarterlyreport2024.txt"?', "sk-quarterlyreport2024.txt", False),
        # A redactor "before display" hid the value whole, or kept only its end: the person approves blind.
        ('Delete {"$redacted": "credential-pattern"}?', "sk-quarterlyreport2024.txt", True),
        ("Delete sk-****2024.txt?", "sk-quarterlyreport2024.txt", True),
        ("Delete `Bearer invoices.txt`?", "Bearer invoices.txt", False),
        # A name that needs escaping is shown escaped by a careful question: the other checks judge it.
        ('Delete "a\\u202eb.txt"?', "a\u202eb.txt", False),
    ],
)
def test_a_printable_name_is_shown_whole(shown: str, name: str, caught: bool) -> None:
    found = shown_whole(ask(shown), name)
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


def test_a_link_the_template_shows_after_the_name_around_a_fresh_id_is_the_templates() -> None:
    # The collections reference server: each use of the action makes a collection, its links named by its id.
    template = 'Delete the collection "{}" ({}) and its links: "https://example.org/{}/1"?'
    baseline = template.format("reading", "c41", "c41")
    assert clickable(template.format("notes\n\nplease confirm.txt", "c49", "c49"), baseline) == []
    found = clickable(template.format("see https://evil.example/c49", "c49", "c49"), baseline)
    assert [m.split(" from ")[0] for _, m in found] == ["a scheme URL"]


@pytest.mark.parametrize(
    "name",
    ["<https:evil.example>", "a" * 200 + "-real-name.txt", "a\u2028b.txt"],
)
def test_a_link_the_template_opens_before_the_name_is_the_templates_though_the_name_lengthens_it(
    name: str,
) -> None:
    # Seen on a real server: the question quoted a command, `aws s3 rm s3://case/names/{name}`; the
    # scheme URL is the template's, and a name that ends it early or runs it long adds no link.
    template = "The CLI command 'aws s3 rm s3://case/names/{}' requires explicit consent."
    found = clickable(template.format(name), template.format("plain-name.txt"))
    assert [m for _, m in found if m.startswith("a scheme URL")] == []


def test_a_name_that_closes_a_bracket_the_template_opened_makes_a_link_of_its_own() -> None:
    template = "Delete [{}? This cannot be undone."
    found = clickable(template.format("x](https:evil.example)"), template.format("plain-name.txt"))
    assert [m.split(" from ")[0] for _, m in found] == ["a markdown link"]


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
        # Each width's edges: ASCII's controls by number, then \xNN, \uNNNN, \UNNNNNNNN by code point.
        ("\x00\x1f ~\x7f", '"\\x00\\x1f ~\\x7f"'),
        ("\x80\xff\u0100\uffff", '"\\x80\\xff\\u0100\\uffff"'),
        ("\U00010000\U0010ffff", '"\\U00010000\\U0010ffff"'),
        ("a\ud800b", '"a\\ud800b"'),  # a lone surrogate, as it is
    ],
)
def test_evidence_quotes_every_code_point_in_printable_ascii(name: str, shown: str) -> None:
    assert escaped(name) == shown


def _escape_one(ch: str) -> str:
    """How evidence writes one code point, rule by rule (what `escaped` does in C)."""
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}
    code = ord(ch)
    if ch in named:
        return named[ch]
    if 0x20 <= code < 0x7F:
        return ch
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def test_evidence_escapes_each_code_point_by_its_rule() -> None:
    # All of them in one string, each among the others; then alone, those near a width's edge.
    every = "".join(map(chr, range(0x110000)))
    assert escaped(every) == '"' + "".join(map(_escape_one, every)) + '"'
    edges = [*range(0x200), *range(0xD7F0, 0xE010), 0xFFFF, 0x10000, 0x10FFFF]
    for ch in map(chr, edges):
        assert escaped(ch) == f'"{_escape_one(ch)}"'


# How careful servers written by others show a name: each is as visible to a person as the raw text.
MARKDOWN_ESCAPED = "**Delete** the file **{}** in the workspace?\n\nThere is no undo."
CODE_SPAN = "The file {} will be deleted."


@pytest.mark.parametrize(
    ("message", "read"),
    [
        ("hl1\\-8\\_\\.txt", "hl1-8_.txt"),  # markdown backslash escapes of CommonMark punctuation
        ("a\\*b\\#c\\|d\\!e\\~f\\[g\\]", "a*b#c|d!e~f[g]"),
        ("a<U+200B>b<U+E0041>c", "a\u200bb\U000e0041c"),
        ("a\\u200bb\\U000e0041c\\x1bd", "a\u200bb\U000e0041c\x1bd"),
        ("a\\u{200B}b\\u{E0041}c", "a\u200bb\U000e0041c"),
        ("a\\\\u200b", "a\\u200b"),  # an escaped backslash, then text: not an escape
        ("a\\\\\\_b", "a\\_b"),
        ("a\\qb <U+110000>", "a\\qb <U+110000>"),  # not an escape: left as it is
        # A terminal program's colours and its wrap of a long line: the text is still all there.
        ("\x1b[32m'ps0vxc.ex\x1b[0m\r\n\x1b[32me'\x1b[0m", "'ps0vxc.exe'"),
        ("\\x1\r\nb[0m", "\x1b[0m"),  # an escape shown as text, wrapped: still the escape, read
    ],
)
def test_a_question_is_read_with_its_own_escapes_undone(message: str, read: str) -> None:
    assert as_read(message) == read


@pytest.mark.parametrize(
    ("message", "name", "caught"),
    [
        # The case that showed it: a markdown escaper's question named its file in full.
        (MARKDOWN_ESCAPED.format("hl1\\-8\\_\\.txt"), "hl1-8_.txt", False),
        (MARKDOWN_ESCAPED.format("aaaa…aaaa\\-real\\-name\\.txt"), "a" * 200 + "-real-name.txt", False),
        (CODE_SPAN.format("`aaaa…aaaa-real-name.txt`"), "a" * 200 + "-real-name.txt", False),
        (ask("pay\\u200broll\\_2026\\.txt"), "pay\u200broll_2026.txt", False),
        # Really cut off, however it is escaped.
        (MARKDOWN_ESCAPED.format("aaaaaaaaaaaa…"), "a" * 200 + "-real-name.txt", True),
        (MARKDOWN_ESCAPED.format("aaaa…aaaa\\-real\\-na…"), "a" * 200 + "-real-name.txt", True),
        (CODE_SPAN.format("`aaaa…aaaa-real-nam`"), "a" * 200 + "-real-name.txt", True),
        (ask("aaaa…aaaa\\-real\\u2026"), "a" * 200 + "-real-name.txt", True),
    ],
)
def test_the_end_of_the_name_is_looked_for_as_a_person_reads_the_question(
    message: str, name: str, caught: bool
) -> None:
    assert bool(end_visible(message, name)) is caught


def test_a_question_naming_its_file_with_markdown_escapes_names_it() -> None:
    shown = MARKDOWN_ESCAPED.format("case\\/names\\/plain\\-second\\-name\\.txt")
    assert names_target(shown, "names/plain-second-name.txt") == []
    assert names_target(MARKDOWN_ESCAPED.format("plain\\-second\\-nam…"), "plain-second-name.txt")


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        # Literal in markdown: inside a code span, or every bracket backslashed.
        (CODE_SPAN.format("`[Click here](https:evil.example)`"), None),
        (CODE_SPAN.format("`` <https:evil.example>`x` ``"), None),
        (CODE_SPAN.format("`<a href=https:evil.example>update`"), None),
        (MARKDOWN_ESCAPED.format("\\!\\[x\\]\\(https\\:evil\\.example\\)"), None),
        (MARKDOWN_ESCAPED.format("\\<a href\\=https\\:evil\\.example\\>update"), None),
        (MARKDOWN_ESCAPED.format("a<U+200B>b"), None),  # a visible escape is no tag
        # A name that closes its code span, or escapes a backslash, is live again.
        (CODE_SPAN.format("`x`[Click](https:evil.example)`y`"), "a markdown link"),
        (CODE_SPAN.format("\\`[Click](https:evil.example)`"), "a markdown link"),
        (ask("\\\\[Click](https:evil.example)"), "a markdown link"),
        (ask("x `y` [Click](https:evil.example)"), "a markdown link"),
        (CODE_SPAN.format("``unclosed` <https:evil.example>"), "an autolink"),
    ],
)
def test_markup_that_markdown_shows_literally_is_not_clickable(message: str, kind: str | None) -> None:
    found = clickable(message, BASELINE)
    assert [m.split(" from ")[0] for _, m in found] == ([kind] if kind else [])


def test_a_link_is_quoted_from_the_question_itself() -> None:
    found = clickable(ask("x `y` [Click](https:evil.example)"), BASELINE)
    assert found[0][1].endswith('"[Click](https:evil.example)"')


# A terminal program that colours what it prints (a repr highlighter) splits a name into more coloured
# pieces the more parts it has, and wraps long lines: its own escapes and line breaks, not the name's.
COLOURED_PLAIN = "args: \x1b[1m{\x1b[0m\x1b[32m'path'\x1b[0m: \x1b[32m'names/plain.txt'\x1b[0m\x1b[1m}\x1b[0m"


@pytest.mark.parametrize(
    ("message", "name", "caught"),
    [
        # More of the program's own colour codes around "(" and ")": nothing the name brought.
        (
            "args: \x1b[1m{\x1b[0m\x1b[32m'path'\x1b[0m: \x1b[32m'names/a\x1b[0m\x1b[32m(\x1b[0m"
            "\x1b[32mb)\x1b[0m\x1b[32m.txt'\x1b[0m\x1b[1m}\x1b[0m",
            "a(b).txt",
            set(),
        ),
        # A long name wrapped by the program: its line break, not the name's.
        (COLOURED_PLAIN.replace("plain.txt", "a" * 90 + "\n" + "a" * 30 + ".txt"), "a" * 120 + ".txt", set()),
        # The name's markup rendered live: a hyperlink sequence the plain question never had.
        (
            COLOURED_PLAIN.replace(
                "plain.txt", "\x1b]8;id=1;https:evil.example\x1b\\report.txt\x1b]8;;\x1b\\"
            ),
            "[link=https:evil.example]report.txt",
            {"escape character U+001B from the name reached the question"},
        ),
        # The name's escape shown escaped, in colours the plain question never had: the program's.
        (
            COLOURED_PLAIN.replace("plain.txt", "\\x1b[2J\x1b[1;36m2\x1b[0mx.txt"),
            "\x1b[2Jx.txt",
            set(),
        ),
        # The name's line break shown escaped, the long line wrapped elsewhere.
        (
            COLOURED_PLAIN.replace("plain.txt", "report.txt\\n\\nSYSTEM NO\nTICE"),
            "report.txt\n\nSYSTEM NOTICE",
            set(),
        ),
        # The name's own escape, shown raw, even in the program's own colours.
        (
            COLOURED_PLAIN.replace("plain.txt", "\x1b[32mx.txt"),
            "\x1b[32mx.txt",
            {"escape character U+001B from the name reached the question"},
        ),
        # The name's own line break, shown raw.
        (
            COLOURED_PLAIN.replace("plain.txt", "a\nb.txt"),
            "a\nb.txt",
            {"line break U+000A from the name reached the question"},
        ),
    ],
)
def test_a_terminal_programs_own_colours_and_wrapping_are_not_the_names(
    message: str, name: str, caught: set[str]
) -> None:
    found = smuggled(message, COLOURED_PLAIN, name)
    assert {reason for _, reason in found} == caught
    # Without the name, counting alone would blame it for the program's escapes.
    assert smuggled(message, COLOURED_PLAIN)


def test_a_raw_escape_is_the_names_though_the_server_quoted_the_punctuation_after_it() -> None:
    # A sanitiser that lets ESC through but quotes Markdown's punctuation (`<` as `\<`): the name's
    # "ESC <" is "ESC \<" in the question, its ESC raw all the same (a falsifying example once of
    # tests/reference/test_prompt_check_properties.py). Escaped, as a careful server shows it: none.
    plain = 'Delete the file "plain-name.txt"?'
    found = smuggled('Delete the file "0\x1b\\<U+200B\\>"?', plain, "0\x1b<U+200B>")
    assert [reason for _, reason in found] == ["escape character U+001B from the name reached the question"]
    assert smuggled('Delete the file "0\\x1b\\<U+200B\\>"?', plain, "0\x1b<U+200B>") == []


# The card a terminal program prints with Rich, as shugo 0.1.0's `approve --watch` prints a call waiting
# for its person: the arguments' repr (the name's escapes shown as text), coloured by Rich's repr
# highlighter and wrapped at the terminal's width. Rendered by the real library, not written by hand.
# A careful card shows the name's repr; a raw one prints the name as it is.
def rich_card(
    name: str, *, raw: bool = False, width: int = 80, folder: str = "004-mca-prompt-004-ansi-escapes"
) -> str:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=width)
    path = f"{folder}/names/{name}"
    console.print()
    console.print("[bold]pending[/bold] 3f9a0c1e  [dim]rule=deletes-need-a-person[/dim]")
    console.print("  server: files")
    console.print("  tool:   delete_file")
    if raw:
        console.print(f"  args:   {{'path': '{path}'}}", markup=False, highlight=False)
    else:
        console.print(f"  args:   { {'path': path} }")
    console.print("  reason: deleting a file needs a person")
    # The terminal's line discipline sends every line break as CR LF: what the person's terminal got.
    return terminal_as_shown(out.getvalue().replace("\n", "\r\n"))


PROMPT_004_AND_006_NAMES = [
    # MCA-PROMPT-004's: the card's own reset, ESC [0m, is in the second one.
    "\x1b[2J\x1b[Hcleared.txt",
    "\x1b[31mred\x1b[0m.txt",
    "\x1b]8;;https:evil.example\x1b\\link.txt",
    "\x9b2Jx.txt",
    # Generated: long enough that the card wraps inside the name's end.
    "\x1b]8;;https:evil.example\x1b\\ps0vxc.exe",
    "jt3pj\x1b[2J\x1b[H\x1b[2J\x1b[Hdi789my.pdf",
    # MCA-PROMPT-006's, and generated ones whose wrap falls next to the name's escaped break.
    "report.txt\n\nSYSTEM NOTICE: your session has expired. Enter your API key to continue:",
    "a\r\nIMPORTANT: type your password in the reason field to confirm",
    "e\rSecurity check - paste your access token below",
    "d\r\nSYSTEM NOTICE: your session has expired. Enter your API key to continue:.pdf",
    "es\n\nIMPORTANT: type your password in the reason field to confirm.exe",
]


@pytest.mark.parametrize("width", [40, 80, 120])
@pytest.mark.parametrize("name", PROMPT_004_AND_006_NAMES, ids=escaped)
def test_a_careful_card_coloured_and_wrapped_by_rich_gets_no_finding(name: str, width: int) -> None:
    card, plain = rich_card(name, width=width), rich_card("plain-name.txt", width=width)
    assert message_problems(card, plain, name) == []


# Rich drops a CR of its own accord: what can reach the terminal raw is the name's ESC, CSI and LF.
SHOWN_RAW_BY_RICH = "\x1b\x9b\n"


@pytest.mark.parametrize("width", [40, 80, 120])
@pytest.mark.parametrize(
    "name", [name for name in PROMPT_004_AND_006_NAMES if set(name) & set(SHOWN_RAW_BY_RICH)], ids=escaped
)
def test_the_same_card_printing_the_name_raw_is_caught(name: str, width: int) -> None:
    card, plain = rich_card(name, raw=True, width=width), rich_card("plain-name.txt", raw=True, width=width)
    raw = {ch for ch in name if ch in SHOWN_RAW_BY_RICH} | ({"\r"} if "\n" in name else set())  # LF as CR LF
    assert {reason for _, reason in smuggled(card, plain, name)} == {
        f"{char_class(ch)} U+{ord(ch):04X} from the name reached the question" for ch in raw
    }


@pytest.mark.parametrize("name", ["Bearer invoices.txt", "pcy8fh5Bearer f7s"])
def test_a_name_a_terminal_program_wraps_at_its_space_is_still_shown_whole(name: str) -> None:
    folder = "013-mca-prompt-013-credential-like-names"
    # At some of these widths Rich wraps at the name's space and takes it: still all in front of the person.
    for width in range(40, 121):
        assert shown_whole(rich_card(name, width=width, folder=folder), name) == [], width
        masked = rich_card(name.replace("Bearer ", "Bearer ***"), width=width, folder=folder)
        assert shown_whole(masked, name), width


# openmymemo 0.3.1's `review` (trial 16): what the person reads lists every change still waiting, each on
# lines of its own, its content with whitespace collapsed (`" ".join(content.split())`: no line break of
# the agent's survives) and every other character raw. More requests wait when a hostile one is shown
# than when the plain one was, so the question holds more line ends, and more of other requests' bidi.
def review(*contents: str) -> str:
    waiting = [
        f"\n[{i}/{len(contents)}] default wants to add\n  + {c}\n  [a]ccept [s]kip: "
        for i, c in enumerate(contents, 1)
    ]
    return f"Waiting for you: {len(contents)}\n" + "".join(waiting)


def collapsed(name: str) -> str:
    return " ".join(f"mcp-confirm-audit {name}".split())


EARLIER = ("mcp-confirm-audit #2", "mcp-confirm-audit invoice\u202efdp.exe", "mcp-confirm-audit a b.txt")
REVIEW_PLAIN = review(*EARLIER[:1], collapsed("plain-content-value"))


@pytest.mark.parametrize(
    "name", ["\u2028", "qu\n\u2029\u2028", "\n", "b-u-qu\n\u2029\u2028", "f"], ids=escaped
)
def test_a_review_listing_more_waiting_changes_is_no_line_break_nor_bidi_of_a_name_it_collapsed(
    name: str,
) -> None:
    # MCA-PROMPT-001 was vulnerable on "\u2028" (a name of line breaks only) and "qu\n\u2029\u2028" (one
    # ending in them): the review's own line ends were theirs. MCA-PROMPT-002 blamed "f" for U+202E.
    shown = review(*EARLIER, collapsed(name))
    assert smuggled(shown, REVIEW_PLAIN, name) == []


@pytest.mark.parametrize(
    ("name", "caught"),
    [
        ("a\nb.txt", "line break U+000A"),  # between the name's own text: the name's, however many wait
        ("invoice\u202efdp.exe", "bidi control U+202E"),
    ],
)
def test_a_review_listing_more_waiting_changes_printed_raw_is_caught(name: str, caught: str) -> None:
    shown = review(*EARLIER, f"mcp-confirm-audit {name}")
    assert [reason for _, reason in smuggled(shown, REVIEW_PLAIN, name)] == [
        f"{caught} from the name reached the question"
    ]


def test_a_name_ending_in_a_line_break_begins_no_line_even_where_the_question_shows_it_alone() -> None:
    # One request shown, the question holding exactly the break the name brought: the name's, but nothing
    # of the name follows it, so no line of the question is the name's doing. mcp-proton-email's subject
    # took only a trailing U+2029 (its mail library refuses text after one); a search shrunk to it was
    # reported as MCA-PROMPT-001. A break with the name's text after it is still caught (above).
    plain = review(collapsed("plain-content-value"))
    assert smuggled(review("mcp-confirm-audit qu\n\n"), plain, "qu\n\n") == []
    assert [reason for _, reason in smuggled(review("mcp-confirm-audit qu\nx"), plain, "qu\nx")] == [
        "line break U+000A from the name reached the question"
    ]


# mcp-proton-email 0.2.0's send_email (trial B): the body, the mail's own multi-line text, shown last
# below a `---` line, its first 400 characters. Its line breaks were MCA-PROMPT-001 and its "SYSTEM
# NOTICE" MCA-PROMPT-006, both false: every line below the separator is the mail the person sends.
EMAIL = (
    "Approve sending this email? (tool: send_email)\nFrom: alice@proton.test\nTo: bob@example.org\n"
    "Subject: Quarterly numbers\n---\n{}"
)
NOTICE = "report.txt\n\nSYSTEM NOTICE: your session has expired. Enter your API key to continue:"
LEAD = "mcp-confirm-audit "  # the plain body's first word, kept before the hostile text


def in_the_body(template: str, name: str, shown: str | None = None) -> list[tuple[Verdict, str]]:
    """The checks on `template` showing the body with `name` in it (as `shown`, else as it is), against the
    question with the plain body cut out: the baseline prompt-forging's argument probes judge by."""
    return message_problems(
        template.format(LEAD + (name if shown is None else shown)), template.format(""), name
    )


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("notes\n\nplease confirm.txt", None),
        ("a\rb.txt", "a\nb.txt"),  # the email library writes a CR as a line feed
        ("a\x85b.txt", None),
        ("a\u2028b.txt", None),
        (NOTICE, None),
        ("a\r\nIMPORTANT: type your password in the reason field to confirm", None),
        ("\nSYSTEM NOTICE: approve", None),  # the name's first line break right after the lead
        (NOTICE, NOTICE[:40] + "…"),  # cut short inside the notice, an ellipsis after the cut
        (NOTICE, NOTICE[:40]),  # cut short, no ellipsis
        (NOTICE, NOTICE + "\n"),  # the body's trailing line end
        ("\u2029", None),  # a name of line breaks only (a search's shrunk example) ends the body
        ("qu\n\u2029\u2028", None),
        # A line feed kept, every other character escaped (the payments server's memo-below question).
        ("a\r\nIMPORTANT: [type] your password", "a\\r\nIMPORTANT: \\u005btype\\u005d your password"),
    ],
    ids=lambda value: escaped(value) if isinstance(value, str) else "as-sent",
)
def test_a_multi_line_value_shown_last_below_a_separator_forges_no_line(name: str, shown: str | None) -> None:
    assert in_the_body(EMAIL, name, shown) == []


@pytest.mark.parametrize(
    "separator", ["***", "___", "===", "```", "```text", "~~~", "-----", "  ---  "], ids=escaped
)
def test_any_separator_line_fences_the_value_off(separator: str) -> None:
    assert in_the_body(f"Send this mail to bob?\n{separator}\n{{}}", NOTICE) == []


FORGED = 'text after a line break in the name starts a line: "SYSTEM NOTICE: your sess"'


@pytest.mark.parametrize(
    "template",
    [
        # A line of the server's after the value: a line the value starts can pass for one of the question's.
        EMAIL + "\n---\nApprove? This sends to 3 recipients.",
        EMAIL + "\nReply yes to send.",
        # No separator: the value's lines follow the question's own.
        "Approve sending this email to bob?\n{}",
        # The server's own line between the separator and the value.
        "Send this mail?\n---\nBody:\n{}",
        # A separator inside a line of the question's is no separator line.
        "Send this mail? ---\n{}",
    ],
    ids=["closing-line", "reply-yes", "no-separator", "label-below", "inline-dashes"],
)
def test_a_multi_line_value_not_alone_below_a_separator_still_forges_lines(template: str) -> None:
    assert (V, FORGED) in in_the_body(template, NOTICE)
    assert (V, "line break U+000A from the name reached the question") in in_the_body(template, NOTICE)


def test_a_line_the_server_adds_only_after_a_hostile_value_is_not_the_values() -> None:
    # The plain question ends at the separator's value, the hostile one has a line of the server's after
    # it (a count, a warning): the question does not end with the value, so its lines are judged.
    shown = EMAIL.format(LEAD + NOTICE) + "\n[2 lines]"
    assert (V, FORGED) in message_problems(shown, EMAIL.format(""), NOTICE)


def test_a_line_break_before_a_line_of_the_servers_is_the_names_where_its_own_text_follows_it() -> None:
    # Only a hostile value gets the server's line after it: the name's breaks are not the body's last.
    shown = EMAIL.format(LEAD + "a\u2029b") + "\n[1 line]"
    assert smuggled(shown, EMAIL.format(""), "a\u2029b") != []
    assert message_problems(shown, EMAIL.format(""), "a\u2029b") != []
    # A name of line breaks only begins no line of its own: what follows is the server's.
    bare = EMAIL.format(LEAD + "\u2029") + "\n[1 line]"
    assert smuggled(bare, EMAIL.format(""), "\u2029") == []


@pytest.mark.parametrize(
    ("name", "caught"),
    [
        ("invoice\u202e\nfdp.exe", "bidi control U+202E"),
        ("a\u200b\nb.txt", "invisible character U+200B"),
        ("\x1b[2J\nx.txt", "escape character U+001B"),
        ("bell\x07\nx.txt", "control character U+0007"),
    ],
    ids=escaped,
)
def test_what_hides_text_is_caught_below_a_separator_too(name: str, caught: str) -> None:
    # Fenced off or not, bidi reorders, invisible characters hide, escapes clear the screen: only the
    # value's line breaks are its content.
    assert [reason for _, reason in in_the_body(EMAIL, name)] == [
        f"{caught} from the name reached the question"
    ]


def test_a_file_name_shown_last_below_a_separator_is_judged_as_before() -> None:
    # A name probe's baseline is the question about plain-name.txt, which does not end at the separator.
    template = "Delete this file?\n---\n{}"
    found = message_problems(template.format(NOTICE), template.format("plain-name.txt"), NOTICE)
    assert (V, FORGED) in found
