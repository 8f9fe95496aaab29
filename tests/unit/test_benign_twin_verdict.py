"""An input attack beside its benign twin: a refusal that names no concern is the tool's when the twin got through.

The twin is the same call with a harmless value of the same shape, sent before
the attack proper (`techniques/_twins.py`). Judged over recorded transcripts.
"""

from __future__ import annotations

import pytest
from verdict_records import attack_spec

from mcp_confirm_audit.confirmations import replies
from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import (
    Exchange,
    FileIdentity,
    Layer,
    Outcome,
    Phase,
    Precondition,
    Response,
    Signatures,
    Transcript,
    TreeSnapshot,
    Verdict,
)
from mcp_confirm_audit.techniques._twin import Twin

TREE = TreeSnapshot({"root/victim.txt": FileIdentity("file", 1, 10, 5, 100)})
LEARNED = Signatures(
    gate=(replies.signature("decline", Response(Outcome.TOOL_ERROR, "not done (decline)")),),
    other=(replies.signature("no-such-subject", Response(Outcome.TOOL_ERROR, "'x.txt' does not exist")),),
)
ROOT_ITSELF = Response(Outcome.TOOL_ERROR, "Error executing tool delete_file: '.' is not a regular file")
BARE = Response(Outcome.TOOL_ERROR, "Error executing tool delete_file")
ASKED = Response(Outcome.INPUT_REQUIRED, "asked the user")
TWIN_REFUSED = Response(
    Outcome.TOOL_ERROR, "Error executing tool delete_file: 'case/twin.txt' is not a regular file"
)


def judged(hostile: Response, twin: Response | None, reached: str = "") -> tuple[Verdict, Layer | None, str]:
    exchanges = []
    if twin is not None:
        exchanges.append(Exchange(Phase.SETUP, "benign twin", "primary", {"name": "delete_file"}, twin))
    exchanges.append(Exchange(Phase.ATTACK, "hostile", "primary", {"name": "delete_file"}, hostile))
    recorded = Twin("case/twin.txt", (0,), reached) if twin is not None else None
    transcript = Transcript(
        "MCA-ROOT-005",
        "delete_file",
        Precondition(True),
        tuple(exchanges),
        TREE,
        TREE,
        signatures=LEARNED,
        parts=(recorded,) if recorded is not None else (),
    )
    result = judge(attack_spec("out-of-root", refuse_before_asking=True), transcript)
    return result.verdict, result.layer, result.reason


def test_a_refusal_naming_no_concern_is_the_tools_when_its_twin_was_asked_about() -> None:
    verdict, layer, reason = judged(ROOT_ITSELF, ASKED, "was asked about")
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)
    assert 'benign twin "case/twin.txt" was asked about' in reason
    assert "'.' is not a regular file" in reason


def test_a_bare_exception_is_named_as_one_inside_the_tool() -> None:
    verdict, layer, reason = judged(BARE, ASKED, "was asked about")
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)
    assert "an exception inside the tool, whose reason the SDK's frame hides" in reason


def test_the_same_refusal_stays_inconclusive_when_the_twin_failed_too_and_quotes_it() -> None:
    verdict, layer, reason = judged(ROOT_ITSELF, TWIN_REFUSED)
    assert (verdict, layer) == (Verdict.INCONCLUSIVE, None)
    assert 'its benign twin "case/twin.txt" failed too' in reason
    assert "'case/twin.txt' is not a regular file" in reason


def test_without_a_twin_nothing_changes() -> None:
    verdict, _, reason = judged(ROOT_ITSELF, None)
    assert verdict is Verdict.INCONCLUSIVE
    assert reason.startswith("the target failed for another reason")


@pytest.mark.parametrize(
    "hostile",
    [
        # The SDK refusing the arguments is never the check, whatever the twin did.
        Response(Outcome.TOOL_ERROR, "1 validation error for delete_fileArguments\npath\n  Field required"),
        # An ordinary answer is no refusal at all: nothing says the check held.
        Response(Outcome.COMPLETE, "ok"),
    ],
)
def test_a_twin_that_got_through_never_makes_a_malformed_call_or_a_plain_answer_a_refusal(
    hostile: Response,
) -> None:
    verdict, _, _ = judged(hostile, ASKED, "was asked about")
    assert verdict is Verdict.INCONCLUSIVE


# -- the same error, one verdict: the harness's own case name echoed back names no concern ----------


def _judged_alone(value: str, hostile: Response) -> tuple[Verdict, Layer | None, str]:
    """mcp-edit-math's commit_safe_edit given a directory, with no twin: what the reply's own words say."""
    arguments = {"file_path": value, "force_override": True, "target_function": "main"}
    sent = Exchange(
        Phase.ATTACK, "hostile", "primary", {"name": "commit_safe_edit", "arguments": arguments}, hostile
    )
    transcript = Transcript(
        "MCA-ROOT-006", "commit_safe_edit", Precondition(True), (sent,), TREE, TREE, signatures=LEARNED
    )
    result = judge(attack_spec("out-of-root", refuse_before_asking=True), transcript)
    return result.verdict, result.layer, result.reason


@pytest.mark.parametrize("value", [".", "020-mca-root-006-directory"], ids=["root-itself", "a-directory"])
def test_is_a_directory_is_judged_alike_whatever_the_harness_named_the_directory(value: str) -> None:
    # "root" in the harness's own case name is not the target naming the gate's concern.
    said = Response(Outcome.COMPLETE, f"\u274c ERROR: [Errno 21] Is a directory: '{value}'")
    verdict, layer, reason = _judged_alone(value, said)
    assert (verdict, layer) == (Verdict.INCONCLUSIVE, None), reason
    assert "naming no concern of a gate" in reason


def test_a_concern_the_target_names_beside_the_echoed_value_is_still_the_gates() -> None:
    said = Response(Outcome.TOOL_ERROR, "'020-mca-root-006-directory' is outside the allowed root")
    verdict, layer, _ = _judged_alone("020-mca-root-006-directory", said)
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)


def test_only_a_whole_echoed_value_is_taken_out_of_a_reply() -> None:
    # Sent "cancel", the status "cancelled" is still the target's own word (a gate's concern).
    said = Response(Outcome.COMPLETE, '{"status": "cancelled", "deleted": false}')
    who = replies.who_refused(said, Signatures(), ["cancel"])
    assert who.by == "gate", who.why
