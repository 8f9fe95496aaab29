"""prompt-forging reaches a field inside an object argument, both ways, on the notes reference server.

As on magnemo-mcp 0.6.10: `stage(note)` takes an object, and the question `handoff` asks
shows the note's `title`, a field inside it. prompt-forging used to read top-level strings
only and said "no string argument ... reaches the question". It now forges `note.title` (the
setup call staged again with that field hostile): the server that puts titles into the
question raw is caught, the careful one (titles escaped) is refused.
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
