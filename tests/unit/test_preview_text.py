"""A preview's result text as the human reads it: JSON escapes are escapes, JSON is shown as code.

The checks are the question's (`prompt_checks`); what changes over a token or
pending flow is what they read: the result text, through `result_as_shown`.
Proven both ways: a careful JSON preview is not a finding, a raw name is.
"""

from __future__ import annotations

import json

import pytest

from mcp_confirm_audit.catalogue.prompt_checks import message_problems, names_target, shown_whole
from mcp_confirm_audit.catalogue.question_text import result_as_shown, without_handle
from mcp_confirm_audit.models import Verdict

V, W = Verdict.VULNERABLE, Verdict.WEAK


def careful(name: str) -> str:
    """A careful server's preview: JSON, every character outside printable ASCII escaped."""
    return json.dumps({"status": "preview", "path": f"names/{name}", "confirm_token": "{handle}"})


def pydantic_like(name: str) -> str:
    """JSON as MCPServer makes it of a dict: controls escaped, every other character as it is."""
    return json.dumps({"status": "preview", "path": f"names/{name}"}, ensure_ascii=False, indent=2)


def raw(name: str) -> str:
    return f"Preview: would delete names/{name}.\nconfirm_token: {{handle}}"


def problems(render: object, name: str) -> list[tuple[Verdict, str]]:
    assert callable(render)
    message, baseline = result_as_shown(render(name)), result_as_shown(render("plain-name.txt"))
    return message_problems(message, baseline, name)


HOSTILE = [
    "bell\a.txt",
    "notes\n\nplease confirm.txt",
    "report.txt\n\nSYSTEM NOTICE: enter your API key:",
    "\x1b[2J\x1b[Hcleared.txt",
    "invoice\u202efdp.exe",
    "pay\u200broll.txt",
    "[Click here](https:evil.example)",
    "<https:evil.example>",
    "a" * 300 + "-real-name.txt",
]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_json_preview_with_every_character_escaped_is_no_finding(name: str) -> None:
    # \u0007 and \n in JSON are six and two printable characters: escapes, not the characters.
    assert problems(careful, name) == []


@pytest.mark.parametrize("name", HOSTILE[:-1])
def test_a_preview_sentence_with_the_raw_name_is_caught(name: str) -> None:
    found = problems(raw, name)
    assert found, name
    assert {verdict for verdict, _ in found} <= {V, W}


@pytest.mark.parametrize(
    ("name", "caught"),
    [
        # JSON escapes what it must (controls, line breaks): those are escapes here too.
        ("bell\a.txt", False),
        ("notes\n\nplease confirm.txt", False),
        ("\x1b[2Jcleared.txt", False),
        # It leaves every other character raw: bidi and invisible characters reach the human.
        ("invoice\u202efdp.exe", True),
        ("pay\u200broll.txt", True),
        # Shown as code, markup in it is not clickable.
        ("[Click here](https:evil.example)", False),
    ],
)
def test_json_with_raw_characters_outside_ascii_is_caught_only_for_what_json_leaves_raw(
    name: str, caught: bool
) -> None:
    assert bool(problems(pydantic_like, name)) is caught


def test_json_is_read_as_code_and_anything_else_as_it_is() -> None:
    assert result_as_shown('{"a": "`x`"}') == '``{"a": "`x`"}``'
    assert result_as_shown("Deleted a.txt.") == "Deleted a.txt."
    # A JSON scalar is not a document a client shows as data.
    assert result_as_shown('"a string"') == '"a string"'


def test_the_file_a_json_preview_names_is_found_through_its_escapes() -> None:
    shown = result_as_shown(careful("caf\u00e9-plain.txt"))
    assert "\\u00e9" in shown
    assert names_target(shown, "names/caf\u00e9-plain.txt") == []
    assert names_target(result_as_shown(careful("other.txt")), "names/caf\u00e9-plain.txt") != []


# A handle is left out of what the person read where the server minted it, never where it is what the
# harness sent (`without_handle`): host-terminal-mcp's pending id is the command line itself.
COMMAND = "rm 001-x/names/ck1o.txt"


def hterm_like(command: str) -> str:
    """A reply whose pending id (`id_from: command`) is the command sent, name and all."""
    said = {"status": "needs_approval", "command": command, "message": f"Command '{command}' needs approval"}
    return json.dumps(said)


@pytest.mark.parametrize(
    ("text", "handle", "sent", "read"),
    [
        # The handle IS the value sent: nothing of it is the server's to vary.
        (hterm_like(COMMAND), COMMAND, [COMMAND], hterm_like(COMMAND)),
        # A random handle is left out, as ever.
        ('{"pending_id": "9fa3c1d2"}', "9fa3c1d2", ["names/a.txt"], '{"pending_id": "{handle}"}'),
        # Built around the subject: the minted part goes, the name stays where it stands.
        (
            "id delete:names/a.txt:7f3a",
            "delete:names/a.txt:7f3a",
            ["names/a.txt"],
            "id {handle}names/a.txt{handle}",
        ),
        # A short handle inside a longer word is that word's text (here the name's), not the handle.
        ("request 7 for ck7o.txt", "7", ["names/ck7o.txt"], "request {handle} for ck7o.txt"),
        # A short value sent found by chance inside a random handle is no part of it.
        ("token 9fa3c", "9fa3c", ["a"], "token {handle}"),
        # No handle, or one the text does not hold: the text as it is.
        ("Deleted a.txt.", None, ["a.txt"], "Deleted a.txt."),
    ],
)
def test_a_handle_is_left_out_only_where_the_server_minted_it(
    text: str, handle: str | None, sent: list[str], read: str
) -> None:
    assert without_handle(text, handle, sent) == read


def test_a_careful_reply_that_is_its_own_pending_id_shows_the_name_whole() -> None:
    name = "sk-quarterlyreport2024.txt"
    command = f"rm 001-x/names/{name}"
    shown = result_as_shown(without_handle(hterm_like(command), command, [command]))
    baseline = result_as_shown(without_handle(hterm_like(COMMAND), COMMAND, [COMMAND]))
    assert message_problems(shown, baseline, name) == []
    assert shown_whole(shown, name) == []
    assert names_target(shown, f"001-x/names/{name}") == []
    # Left out with the handle, the name was gone: every check said the person could not see it.
    erased = result_as_shown(hterm_like(command).replace(command, "{handle}"))
    assert shown_whole(erased, name) != []
    assert names_target(erased, name) != []


@pytest.mark.parametrize("name", ["invoice\u202efdp.exe", "pay\u200broll.txt"])
def test_a_raw_character_in_a_reply_that_is_its_own_pending_id_is_still_caught(name: str) -> None:
    # JSON as the SDK writes a dict leaves bidi and invisible characters raw: the command (the handle)
    # holds them, and left out with it they were never judged.
    def reply(command: str) -> str:
        return json.dumps({"status": "needs_approval", "command": command}, ensure_ascii=False)

    command, plain = f"rm names/{name}", "rm names/plain-name.txt"
    shown = result_as_shown(without_handle(reply(command), command, [command]))
    baseline = result_as_shown(without_handle(reply(plain), plain, [plain]))
    assert {verdict for verdict, _ in message_problems(shown, baseline, name)} == {V}
