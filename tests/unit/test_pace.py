"""The person's pace learned with no profile (engine/pace): the words, pure."""

from __future__ import annotations

from mcp_confirm_audit.engine import pace


def test_the_target_s_words_that_a_yes_came_too_soon_are_found_with_their_context() -> None:
    said = pace.said_too_soon('{"asked": "refused: answered too fast to be a person (1 ms); nothing kept"}')
    assert said is not None
    assert "answered too fast to be a person (1 ms)" in said
    assert pace.said_too_soon("answered 3 ms after the question, faster than a person reads it") is not None
    assert pace.said_too_soon("not deleted: the person answered decline") is None


def test_the_learned_fact_names_the_paces_refused_and_the_one_kept() -> None:
    once = pace.learned("handoff", 0.5, (), "too fast")
    assert (
        "it refused a yes, one sent at once (…too fast…), and took one sent 0.5 s after its question" in once
    )
    assert "every answer on handoff waits 0.5 s after its question" in once
    twice = pace.learned("handoff", 2.0, (0.5,), "too fast")
    assert "one sent at once and one sent 0.5 s after its question" in twice


def test_no_pace_passed_says_which_were_tried_and_what_else_failed() -> None:
    assert pace.still_refused((0.5, 2.0), None) == (
        "; answered again 0.5 s and 2 s after the question, the yes was refused as well"
    )
    assert (
        pace.still_refused((0.5,), "no effect seen")
        == "; answered again 0.5 s after the question: no effect seen"
    )
    assert tuple(sorted(pace.LADDER)) == pace.LADDER
