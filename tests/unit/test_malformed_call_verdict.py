"""A refusal of the harness's own malformed call is no refusal by the gate: inconclusive, saying why.

Seen on PyPI servers: "No staged invoice with this id" for a call that left the staged id out,
counted as the gate refusing; a signed challenge's object sent where a string token belongs,
refused as a wrong token. The call is checked against the tool's own schema when it is sent
(`techniques.base.malformed_call`, recorded as `Exchange.malformed`); judged over recorded
transcripts here.
"""

from __future__ import annotations

from typing import Any

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
from mcp_confirm_audit.techniques.base import malformed_call

TREE = TreeSnapshot({"root/victim.txt": FileIdentity("file", 1, 10, 5, 100)})
POST = {
    "type": "object",
    "properties": {"invoice_id": {"type": "string"}, "approval_token": {"type": "string"}},
    "required": ["invoice_id", "approval_token"],
}


@pytest.mark.parametrize(
    ("args", "omit", "said"),
    [
        ({"approval_token": "t"}, (), "left out 'invoice_id'"),
        ({"invoice_id": "inv_1", "approval_token": {"nonce": "n", "sig": "s"}}, (), "sent an object"),
        ({"invoice_id": "inv_1", "approval_token": ["t"]}, (), "sent a list"),
        # A mechanism's own argument, left out on purpose (the call without the token), is no fault.
        ({"invoice_id": "inv_1"}, ("approval_token",), ""),
        ({"invoice_id": "inv_1", "approval_token": "t"}, (), ""),
    ],
)
def test_a_call_is_malformed_only_by_what_no_reading_of_the_schema_excuses(
    args: dict[str, Any], omit: tuple[str, ...], said: str
) -> None:
    found = malformed_call(POST, args, may_omit=omit)
    assert (said in found) if said else found == ""


def test_an_untyped_or_object_taking_argument_takes_anything() -> None:
    schema = {"properties": {"meta": {"type": "object"}, "any": {}}}
    assert malformed_call(schema, {"meta": {"a": 1}, "any": [1]}) == ""


def judged(malformed: str) -> tuple[Verdict, Layer | None, str]:
    call = {"name": "post_invoice", "arguments": {"approval_token": "t"}}
    refused = Response(Outcome.TOOL_ERROR, "No staged invoice with this id; approval required")
    exchange = Exchange(Phase.ATTACK, "redeem", "primary", call, refused, malformed=malformed)
    transcript = Transcript("MCA-TEST-001", "post_invoice", Precondition(True), (exchange,), TREE, TREE)
    result = judge(attack_spec("replay"), transcript)
    return result.verdict, result.layer, result.reason


def test_the_gate_s_words_to_a_malformed_call_are_inconclusive_and_say_what_was_wrong() -> None:
    verdict, layer, reason = judged("the call left out 'invoice_id', which the tool's schema requires")
    assert (verdict, layer) == (Verdict.INCONCLUSIVE, None)
    assert "was malformed (the call left out 'invoice_id'" in reason
    assert "No staged invoice with this id" in reason


def test_the_same_words_to_a_well_formed_call_are_the_gate_refusing() -> None:
    verdict, layer, _ = judged("")
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)
