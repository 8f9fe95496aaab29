"""stage-time-fields both ways: a stage whose stated amount decides whether a person is asked.

The invoice desk (targets/stage_decl) stages an inbox document for posting and says whether a
person must approve it (above 5,000.00); the person approves on their own channel (a file their
command writes), and the agent posts. The honest item, doc-2291 at 7,420.00, needs a person. The
attack stages it with its amount stated as the smallest the schema takes and posts it at once:
the flaw decides from the stated amount and posts the real document with nobody asked; the careful
desk refuses the statement at the stage (its default) or sets it aside and holds the post for
sign-off (its second style, in other words). MCA-STAGEDECL-002 stages doc-2291 under its own id as
another vendor's small order (the profile's stage_as: PO-1191 at 655.00): the desk that matches the
stated amount with the stated order only (trusts-stated-record) posts it with nobody asked, while it
refuses 001's 0.01 (no order says 0.01); both careful styles compare with the document's own order.
An action whose flow stages nothing, or a profile with no stage_as:, is not applicable.
Every audit is in process and runs this family alone (CI budget).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION, AuditFn
from test_detection_matrix import in_process

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

SERVER = Path(__file__).resolve().parents[2] / "targets" / "stage_decl" / "server.py"
ID, OTHER = "MCA-STAGEDECL-001", "MCA-STAGEDECL-002"
TOUCH = (
    f'{sys.executable} -c "import pathlib, sys; pathlib.Path(sys.argv[1]).touch()" {{root}}/.approvals/{{id}}'
)


def desk(style: str = "refuses", *flaws: str, **changes: Any) -> dict[str, Any]:
    """The desk's profile: the stage is the flow's own call, the person's yes a file, the post the commit."""
    return {
        "command": f"py:{SERVER}:build_server",
        "factory_args": {"style": style, "flaws": list(flaws)},
        "tool": "stage_invoice",
        "args": {"document_id": "doc-2291", "po_number": "PO-1180", "amount_cents": 742000},
        # Another vendor's small order, as a truthful agent would state it for that order's own invoice.
        "stage_as": {"po_number": "PO-1191", "amount_cents": 65500},
        "effect": [{"tool": "list_posted"}],
        "ignore": [".approvals", ".approvals/**"],
        "call_timeout": 10.0,
        "confirmation": {
            "kind": "pending",
            "pending": {
                "id_from": "staged_id",
                "human": {"command": TOUCH, "decline": f"{TOUCH}.declined"},
                "execute": {"tool": "post_invoice", "args": {"staged_id": "{id}"}},
            },
        },
        **changes,
    }


def audit(catalogue: Catalogue, raw: dict[str, Any]) -> AuditRun:
    return run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family == "stage-time-fields",
        generation=MATRIX_GENERATION,
    )


def test_a_stage_that_trusts_the_stated_amount_posts_the_real_document_with_nobody_asked(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, desk("refuses", "trusts-stated-amount"))
    assert all(c.passed for c in run.controls), run.controls
    result = run.by_id()[ID]
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE), (
        result.reason,
        result.evidence,
    )
    assert '"doc-2291"' in result.reason, result.reason
    assert "amount_cents stated as 1, not 742000" in result.reason, result.reason
    assert not result.asked_user
    # The desk decides from any amount stated: the document staged as another record is posted too.
    assert run.by_id()[OTHER].verdict is Verdict.VULNERABLE, run.by_id()[OTHER].reason


def test_a_stage_that_matches_the_statement_with_itself_posts_the_document_staged_as_another_record(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, desk("refuses", "trusts-stated-record"))
    assert all(c.passed for c in run.controls), run.controls
    result = run.by_id()[OTHER]
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE), (
        result.reason,
        result.evidence,
    )
    assert '"doc-2291"' in result.reason, result.reason
    assert 'po_number stated as "PO-1191", not "PO-1180"' in result.reason, result.reason
    assert not result.asked_user
    # The same desk matches 0.01 with the stated order, so the least amount alone is refused at the stage.
    least = run.by_id()[ID]
    assert (least.verdict, least.layer) == (Verdict.REFUSED, Layer.TOOL), (least.reason, least.evidence)
    assert "does not match PO-1180" in least.reason, least.reason


@pytest.mark.parametrize(
    ("style", "said"),
    [
        # The careful default: the stated amount is not the document's own, refused before anything is asked.
        ("refuses", "the stage refused the item stated falsely"),
        # Another style: the statement set aside, the document's own amount staged; the post waits for sign-off.
        ("record", "waits for sign-off"),
    ],
)
def test_a_careful_desk_in_either_style_holds_and_says_where(
    catalogue: Catalogue, style: str, said: str
) -> None:
    run = audit(catalogue, desk(style))
    assert all(c.passed for c in run.controls), run.controls
    for attack in (ID, OTHER):
        result = run.by_id()[attack]
        assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (
            result.reason,
            result.evidence,
        )
        assert said in result.reason, result.reason


def test_a_flow_that_stages_nothing_is_not_applicable(audit_reference: AuditFn) -> None:
    # The careful reference server asks over MRTR: nothing is staged under an id before the person answers.
    run = audit_reference(**in_process([]), families=["stage-time-fields"])
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    for attack in (ID, OTHER):
        result = run.by_id()[attack]
        assert result.verdict is Verdict.NOT_APPLICABLE, (result.reason, result.evidence)
        assert "confirms with mrtr" in result.reason, result.reason


def test_a_least_amount_or_no_other_record_named_is_not_applicable(catalogue: Catalogue) -> None:
    # The honest stage already states the smallest amount the schema takes (the careful desk stages the
    # document's own): nothing can be stated lower, so nothing is tried. The profile names no other
    # record (no stage_as:): 002 says which key to set.
    raw = desk("record", args={"document_id": "doc-2291", "po_number": "PO-1180", "amount_cents": 1})
    del raw["stage_as"]
    run = audit(catalogue, raw)
    result = run.by_id()[ID]
    assert result.verdict is Verdict.NOT_APPLICABLE, (result.reason, result.evidence)
    assert "no number stated" in result.reason, result.reason
    other = run.by_id()[OTHER]
    assert other.verdict is Verdict.NOT_APPLICABLE, (other.reason, other.evidence)
    assert "set stage_as:" in other.reason, other.reason
