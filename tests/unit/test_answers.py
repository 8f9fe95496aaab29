"""The honest answer, and the honest "no", built from a form's schema."""

from __future__ import annotations

from mcp_confirm_audit.confirmations import answers

BOOLEAN = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
NAME = {"type": "object", "properties": {"confirm_name": {"type": "string", "title": "Type the file's name"}}}
ENUM = {
    "type": "object",
    "properties": {"choice": {"type": "string", "enum": ["keep", "delete"]}},
    "required": ["choice"],
}
TEXT_ONLY = {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}
SECRET = {
    "type": "object",
    "properties": {"api_key": {"type": "string", "title": "API key to continue"}},
    "required": ["api_key"],
}


def test_yes_ticks_the_box_types_the_name_and_picks_the_affirmative_choice() -> None:
    assert answers.affirmative(BOOLEAN, "v.txt", "a/v.txt") == {"confirm": True}
    assert answers.affirmative(NAME, "v.txt", "a/v.txt") == {"confirm_name": "v.txt"}
    assert answers.affirmative(ENUM, "v.txt", "a/v.txt") == {"choice": "delete"}


def test_no_unticks_the_box_types_another_name_and_picks_the_negative_choice() -> None:
    assert answers.negative(BOOLEAN, "v.txt", "a/v.txt") == {"confirm": False}
    assert answers.negative(NAME, "v.txt", "a/v.txt") == {"confirm_name": "not-v.txt"}
    assert answers.negative(ENUM, "v.txt", "a/v.txt") == {"choice": "keep"}


def test_a_form_that_cannot_say_no_has_no_negative_answer() -> None:
    assert answers.negative(TEXT_ONLY, "v.txt", "a/v.txt") is None


def test_a_form_asking_for_a_secret_gets_a_decoy_never_a_real_value() -> None:
    assert answers.affirmative(SECRET, "v.txt", "a/v.txt") == {"api_key": answers.SECRET_DECOY}


def test_a_profile_template_overrides_the_schema() -> None:
    template = {"confirm_name": "{name}", "reason": "cleanup of {path}"}
    assert answers.affirmative(NAME, "v.txt", "a/v.txt", template) == {
        "confirm_name": "v.txt",
        "reason": "cleanup of a/v.txt",
    }
