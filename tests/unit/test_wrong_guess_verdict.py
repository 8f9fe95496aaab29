"""A wrong guess, then the honest confirmation: judged from the effects counted, over recorded transcripts."""

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
from mcp_confirm_audit.techniques._single_use import SingleUse
from mcp_confirm_audit.techniques.wrong_guess import guessed

SPEC = attack_spec("wrong-guess", id="MCA-BURN-001", level="SHOULD")
TREE = TreeSnapshot({"root/victim.txt": FileIdentity("file", 1, 10, 5, 100)})
UNKNOWN = Response(Outcome.TOOL_ERROR, "unknown confirm_token: preview the action first")
DELETED = Response(Outcome.COMPLETE, "Deleted victim.txt (41 bytes).")
SPENT = Response(Outcome.TOOL_ERROR, "this confirm_token was already used")


def judged(
    guess: Response, honest: Response, taken_guessing: int, taken: int
) -> tuple[Verdict, Layer | None, str]:
    exchanges = (
        Exchange(Phase.ATTACK, "confirm with the token", "primary", {"name": "delete_file"}, guess),
        Exchange(Phase.ATTACK, "confirm with the token", "primary", {"name": "delete_file"}, honest),
    )
    use = SingleUse((0,), (1,), taken_guessing, taken, if_none_taken="burnt")
    transcript = Transcript(
        "MCA-BURN-001", "delete_file", Precondition(True), exchanges, TREE, TREE, parts=(use,)
    )
    result = judge(SPEC, transcript)
    return result.verdict, result.layer, result.reason


def test_a_wrong_guess_refused_and_the_honest_confirmation_acting_is_refused_by_the_tool() -> None:
    verdict, layer, reason = judged(UNKNOWN, DELETED, 0, 1)
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)
    assert "took no effect" in reason, reason
    assert "honest confirmation after it still did" in reason, reason


def test_a_wrong_guess_that_spent_the_approval_is_weak_quoting_both_replies() -> None:
    verdict, _, reason = judged(UNKNOWN, SPENT, 0, 0)
    assert verdict is Verdict.WEAK
    assert "denial of service" in reason
    assert "unknown confirm_token" in reason
    assert "already used" in reason


def test_a_wrong_guess_that_acted_is_vulnerable() -> None:
    verdict, _, _ = judged(DELETED, SPENT, 1, 1)
    assert verdict is Verdict.VULNERABLE


@pytest.mark.parametrize("handle", ["c2d7da4cadc82287", "029a3c46fae6c04f", "AbC9", "tok_Z", "x-y", "7"])
def test_a_guess_has_the_handles_shape_and_is_never_the_handle(handle: str) -> None:
    guess = guessed(handle)
    assert guess != handle
    assert len(guess) == len(handle)
    assert guess[:-1] == handle[:-1]
