"""staged-fields' verdict: an effect holding what changed after the approval, read from the probes."""

from __future__ import annotations

from typing import Any

import pytest
from test_verdict import DONE, OK, TREE, exchange
from verdict_records import attack_spec

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import Layer, Transcript, Verdict
from mcp_confirm_audit.techniques.staged_fields import Staged, _own_id

STAGED = attack_spec("staged-fields")
NONE_POSTED: dict[str, Any] = {"tool:list_posted": {"posted": []}}


def posted(**invoice: Any) -> dict[str, Any]:
    return {"tool:list_posted": {"posted": [{"invoice_id": "inv_1", "vendor": "acme", **invoice}]}}


def committed(after: Any, part: Staged) -> Transcript:
    return Transcript(
        "MCA-TEST-001",
        "stage_invoice",
        OK,
        (exchange(DONE),),
        TREE,
        TREE,
        observed_before=NONE_POSTED,
        observed_after=after,
        parts=(part,),
    )


EDITED = Staged(5007, 500, "amount_cents was edited after the approval")


def test_posting_the_amount_edited_after_the_approval_is_vulnerable() -> None:
    result = judge(STAGED, committed(posted(amount_cents=5007), EDITED))
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert "committed what the person never approved: amount_cents was edited" in result.reason
    assert "5007" in result.reason


def test_posting_the_amount_the_person_approved_is_the_commit_working() -> None:
    result = judge(STAGED, committed(posted(amount_cents=500), EDITED))
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)
    assert "as the person approved it (500)" in result.reason


@pytest.mark.parametrize("part", [EDITED, Staged("inv_8", None, "the commit named an id never staged")])
def test_an_effect_no_probe_ties_to_either_value_is_inconclusive(part: Staged) -> None:
    result = judge(STAGED, committed(posted(amount_cents=12), part))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "add an effect" in result.reason


def test_posting_an_id_never_staged_is_vulnerable() -> None:
    own = _own_id("inv_0123456789abcdef")
    part = Staged(own, None, "the commit named an id never staged")
    after = {"tool:list_posted": {"posted": [{"invoice_id": own, "vendor": "acme", "amount_cents": 500}]}}
    result = judge(STAGED, committed(after, part))
    assert result.verdict is Verdict.VULNERABLE


@pytest.mark.parametrize("handle", ["inv_0123456789abcdef", "42", "req-Abc_xyz", "TICKET_QQ9"])
def test_an_id_of_ones_own_has_the_handles_shape_and_is_not_it(handle: str) -> None:
    own = _own_id(handle)
    assert own != handle
    assert len(own) == len(handle)
    assert own.rpartition("_")[0] == handle.rpartition("_")[0]
