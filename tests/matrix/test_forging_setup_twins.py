"""A value staged through a setup call gets the same twins as an action's argument: proven on the careful desk.

The booking desk (targets/desk) stages a booking with the read-only `plan_booking(slot_id, phone, date)`
and asks about `book(plan_id)`; its question shows the staged slot, phone and date, each format-checked
before anything is staged (a slot `S-NNN` that `list_slots` names, an E.164 phone, a date). prompt-forging
stages its hostile values through that setup call, and each argument gets its benign twin there first
(techniques/_twins_closed.py). The slot's twin and its shape twin `S-107` are refused while the honest
`S-101` was staged and asked about: a lookup, nothing to forge through. The phone's shape twin
`+12025550129` is staged and asked about, so the phone is open to values of its shape, and every hostile
value after it is refused by the setup call with nothing moved: `refused` by the tool, quoting its reply,
never `inconclusive`. The flawed side (a staged value shown raw) is the staging and notes servers' in
test_forging_inside_values.py and test_decoys_and_asked.py. The desk built in process, one family.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION, forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile

DESK = Path(__file__).resolve().parents[2] / "targets" / "desk" / "server.py"
# The form checks (secret-in-form, nested-form, names-the-target) judge the honest value's question.
FORM = {"MCA-PROMPT-010", "MCA-PROMPT-011", "MCA-PROMPT-012"}


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        # MRTR: the question shows the slot, the date and the phone, which takes values of its shape.
        ({}, Verdict.REFUSED),
        # A payload of its own: its reason shows the slot and the date alone, and the slot is a lookup.
        ({"asks": "decision-ask", "world": "keeps"}, Verdict.NOT_APPLICABLE),
        ({"asks": "needs-confirm", "world": "keeps"}, Verdict.NOT_APPLICABLE),
    ],
    ids=["mrtr", "decision-ask", "needs-confirm"],
)
def test_the_careful_desks_staged_values_end_refused_or_not_applicable(
    catalogue: Catalogue, factory: dict[str, str], expected: Verdict
) -> None:
    profile = forked(Profile(command=f"py:{DESK}:build_server", factory_args=factory, call_timeout=10.0))
    run = run_audit(
        profile,
        catalogue=catalogue,
        generation=MATRIX_GENERATION,
        select=lambda spec: spec.family == "prompt-forging",
    )
    results = run.by_id()
    assert results
    for attack_id, result in sorted(results.items()):
        summary = f"{attack_id}: {result.verdict.value} {result.reason}"
        assert result.verdict in (Verdict.REFUSED, Verdict.NOT_APPLICABLE), summary
        if attack_id in FORM:
            continue
        assert result.verdict is expected, summary
        evidence = "\n".join(result.evidence)
        # The slot is a lookup: its shape twin refused while the honest slot was staged and asked about.
        assert '"S-107", a value of the shape of the honest "S-101", was refused' in evidence, summary
        if expected is Verdict.NOT_APPLICABLE:
            assert "slot_id names a record that must exist" in result.reason, summary
            assert "no slot 'S-107'" in result.reason, summary
            continue
        # The phone takes values of its shape: the hostile ones go in after the shape twin and are refused.
        assert '"+12025550129", a value of the shape of the honest "+12025550123", was' in evidence, summary
        assert result.layer is Layer.TOOL, summary
        assert 'its benign twin "plain-phone-value" was refused, but "+12025550129"' in result.reason, summary
        assert "String should match pattern" in result.reason, summary
