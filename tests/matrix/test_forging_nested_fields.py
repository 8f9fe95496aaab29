"""prompt-forging reaches a field inside an object argument, both ways, on the notes reference server.

As on magnemo-mcp 0.6.10: `stage(note)` takes an object, and the question `handoff` asks
shows the note's `title`, a field inside it. prompt-forging used to read top-level strings
only and said "no string argument ... reaches the question". It now forges `note.title` (the
setup call staged again with that field hostile): the server that puts titles into the
question raw is caught, the careful one (titles escaped) is refused.

A staged title can also be held out of the question altogether: magnemo-mcp's sentinel holds a
credential-like note aside, never asked about and never kept by the person's yes. PROMPT-013 judged
such a title "not shown: the person approves a file they cannot see", which the person never
approved. A value whose staging leaves the question as it was is not asked about (as a refusal);
a title the question shows masked, which the yes still keeps, is caught.
"""

from __future__ import annotations

import pytest
from notes_audit import audit_notes

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.models import Layer, Verdict

LINE_BREAKS = "MCA-PROMPT-001"


@pytest.mark.parametrize(
    ("flaws", "verdict", "layer"),
    [(("unsanitised-titles",), Verdict.VULNERABLE, Layer.NONE), ((), Verdict.REFUSED, Layer.TOOL)],
    ids=["raw-titles", "escaped-titles"],
)
def test_a_title_inside_the_staged_note_is_forged(
    catalogue: Catalogue, flaws: tuple[str, ...], verdict: Verdict, layer: Layer
) -> None:
    result = audit_notes(catalogue, LINE_BREAKS, flaws=flaws)
    assert (result.verdict, result.layer) == (verdict, layer), (result.reason, result.evidence)
    assert "note: hostile strings go into stage's 'note.title', which the question shows" in result.evidence
    # The hostile title went into the staged note itself, the store and the rest of it unchanged.
    assert any('"note": {"title": "Deploy ' in e and '"store": "playbooks"' in e for e in result.evidence)


CREDENTIAL_LIKE = "MCA-PROMPT-013"


@pytest.mark.parametrize(
    ("flaws", "sentinel", "verdict"),
    [(("masks-secrets",), False, Verdict.VULNERABLE), ((), True, Verdict.REFUSED)],
    ids=["masked-but-kept", "held-out-by-a-sentinel"],
)
def test_a_title_held_out_of_the_question_is_not_judged_shown(
    catalogue: Catalogue, flaws: tuple[str, ...], sentinel: bool, verdict: Verdict
) -> None:
    result = audit_notes(catalogue, CREDENTIAL_LIKE, flaws=flaws, sentinel=sentinel)
    assert result.verdict is verdict, (result.reason, result.evidence)
    if verdict is Verdict.VULNERABLE:
        assert "is not shown (masked or left out)" in result.reason, result.reason
        return
    # The held titles were not asked about; the others reached the question, escaped and whole.
    assert any("staged, then left out of the question" in e for e in result.evidence), result.evidence
