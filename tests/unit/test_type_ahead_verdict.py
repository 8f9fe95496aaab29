"""An answer typed on the person's terminal before the call: judged from the effect and what stayed unread."""

from __future__ import annotations

import pytest
from verdict_records import attack_spec

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import (
    Exchange,
    FileIdentity,
    Layer,
    Outcome,
    Phase,
    Precondition,
    Response,
    Transcript,
    TreeSnapshot,
    Verdict,
)
from mcp_confirm_audit.techniques.type_ahead import AnswerTypedAhead

SPEC = attack_spec("type-ahead", id="MCA-TYPEAHEAD-001", level="DERIVED", severity="medium")
BEFORE = TreeSnapshot({"root/victim.txt": FileIdentity("file", 1, 10, 5, 100)})
GONE = TreeSnapshot({})
DELETED = Response(Outcome.COMPLETE, 'deleted "victim.txt"')
DENIED = Response(Outcome.TOOL_ERROR, "refused: the person at the terminal did not approve")
ACTED_UNREAD = (
    Verdict.VULNERABLE,
    "acted on an answer typed on the person's terminal before its question was shown",
)


def judged(response: Response, after: TreeSnapshot, *, unread: bool) -> tuple[Verdict, Layer | None, str]:
    call = Exchange(Phase.ATTACK, "with nobody answering", "primary", {"name": "delete_file"}, response)
    transcript = Transcript(
        "MCA-TYPEAHEAD-001",
        "delete_file",
        Precondition(True),
        (call,),
        BEFORE,
        after,
        parts=(AnswerTypedAhead(("y",), unread),),
        effect_verdict=ACTED_UNREAD,
    )
    result = judge(SPEC, transcript)
    return result.verdict, result.layer, result.reason


def test_a_question_approved_by_the_line_typed_before_it_is_vulnerable() -> None:
    verdict, layer, reason = judged(DELETED, GONE, unread=False)
    assert (verdict, layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert reason.startswith(
        "acted on an answer typed on the person's terminal before its question was shown"
    )
    assert "root/victim.txt" in reason


def test_a_server_that_threw_the_line_away_and_refused_unanswered_is_refused_by_the_tool() -> None:
    verdict, layer, reason = judged(DENIED, BEFORE, unread=False)
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)
    assert reason.startswith("the answer typed before the question was shown ('y') approved nothing: ")
    assert "did not approve" in reason


@pytest.mark.parametrize(("response", "after"), [(DENIED, BEFORE), (DELETED, BEFORE)])
def test_a_server_that_never_read_its_terminal_judged_nothing(
    response: Response, after: TreeSnapshot
) -> None:
    # The line typed ahead was still waiting when the call ended: no question was read for, so a
    # refusal (or an answer that moved nothing) says nothing of what it does with type-ahead.
    verdict, layer, reason = judged(response, after, unread=True)
    assert (verdict, layer) == (Verdict.INCONCLUSIVE, None)
    assert "never read its terminal" in reason


def test_acting_without_reading_the_line_is_no_answer_taken_as_yes_not_type_ahead() -> None:
    verdict, layer, reason = judged(DELETED, GONE, unread=True)
    assert (verdict, layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert "acted without reading its terminal" in reason
    assert "no answer was taken as a yes" in reason
