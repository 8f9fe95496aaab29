"""ungated: a call that never ran is no refusal (magnemo-mcp's `drop`, lost behind an open question).

magnemo-mcp, zero configuration: `handoff` asked the person and held the
single-threaded server behind the open question, so the next plain call (`drop`)
lost its connection; the attack was judged `refused` all the same. A call whose
connection was lost, or that got no answer in time, tried nothing: the attack is
`inconclusive`, naming it, whatever the other tools answered.
"""

from __future__ import annotations

from verdict_records import judged_ungated, plain_call

from mcp_confirm_audit.models import Exchange, Layer, Outcome, Response, Result, Verdict

ASKED = Response(Outcome.INPUT_REQUIRED, "asked the user (elicitation/create over the back channel)")
LOST = Response(Outcome.TRANSPORT, "connection already lost earlier in this attack")


def called(name: str, response: Response) -> Exchange:
    return plain_call(name, {"note": "n-1"}, response)


def judged(*calls: Exchange) -> Result:
    return judged_ungated("stage", *calls, id="MCA-UNGATED-001")


def test_a_call_that_lost_its_connection_after_another_asked_is_no_refusal() -> None:
    result = judged(called("handoff", ASKED), called("archive", LOST))
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, None), result.reason
    assert "1 of the calls to other tools never ran" in result.reason, result.reason
    assert 'archive: "connection already lost earlier in this attack"' in result.reason, result.reason


def test_a_call_lost_alone_is_no_refusal() -> None:
    result = judged(called("archive", LOST))
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, None), result.reason
    assert "none of the 1 calls to other tools ran" in result.reason, result.reason


def test_another_tool_that_asked_with_every_call_answered_is_still_refused() -> None:
    result = judged(called("handoff", ASKED), called("archive", Response(Outcome.TOOL_ERROR, "no such note")))
    assert result.verdict is Verdict.REFUSED, result.reason
    assert result.layer is not Layer.TRANSPORT
