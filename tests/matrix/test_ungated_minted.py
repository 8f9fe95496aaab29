"""ungated carries what the setup minted for this use, both ways, on the notes reference server.

As on magnemo-mcp 0.6.10: `handoff` asks the person (2025-era elicitation) before it keeps
the staged notes, while `keep(note)` takes a staged note's id. ungated used to call `keep`
with a made-up id ("no note waiting with the id 'mcp-confirm-audit'") and count a refusal as
the gate's. With `save: {note: staged}` it now sends the staged id (a fresh use for each tool
given one, since `drop` spends it): the flawed `keep` keeping it unasked is the gated harm, the
careful one's refusal is the gate. Without a saved id every call is about a made-up value:
inconclusive, never refused; stage (the setup's own tool, made with the setup's arguments) staging
a note is no try of the others.
"""

from __future__ import annotations

import pytest
from notes_audit import audit_notes

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.models import Layer, Result, Verdict

UNGATED = "MCA-UNGATED-001"


def ungated(catalogue: Catalogue, *, flaws: tuple[str, ...], saved: bool) -> Result:
    return audit_notes(catalogue, UNGATED, flaws=flaws, save={"note": "staged"} if saved else None)


@pytest.mark.parametrize(
    ("flaws", "saved", "verdict", "layer"),
    [
        (("keeps-unasked",), True, Verdict.VULNERABLE, Layer.NONE),
        ((), True, Verdict.REFUSED, Layer.TOOL),
        (("keeps-unasked",), False, Verdict.INCONCLUSIVE, None),
    ],
    ids=["keeps-the-staged-id-unasked", "careful-keep-refuses-the-staged-id", "made-up-id-only"],
)
def test_ungated_sends_the_staged_id_and_judges_no_made_up_one(
    catalogue: Catalogue, flaws: tuple[str, ...], saved: bool, verdict: Verdict, layer: Layer | None
) -> None:
    result = ungated(catalogue, flaws=flaws, saved=saved)
    assert (result.verdict, result.layer) == (verdict, layer), (result.reason, result.evidence)
    (keep,) = [line for line in result.evidence if "-> keep(" in line]
    if saved:
        assert '"note": "note-' in keep, keep  # the id stage minted, a fresh one after drop spent its own
        assert "mcp-confirm-audit" not in keep, keep
    else:
        assert "no note waiting with the id 'mcp-confirm-audit'" in result.reason, result.reason
        # stage, the setup's tool, makes a use of the action with the setup's own arguments (no made-up
        # store): its staging is no try of keep, so it judges nothing here and is not quoted.
        (stage,) = [line for line in result.evidence if "stage, plainly -> stage(" in line]
        assert '"store": "playbooks"' in stage, stage
        assert "stage said" not in result.reason, result.reason
    if verdict is Verdict.VULNERABLE:
        assert "keep acted with no confirmation" in result.reason, result.reason
    if verdict is Verdict.REFUSED:
        assert "needs the person's confirmation" in result.reason, result.reason
