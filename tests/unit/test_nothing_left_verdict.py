"""A success with nothing to do is no refusal: the world the last control left behind had no subject left.

The threats (PyPI trials): photo-organizer-mcp without isolation, where the approve
control moved every photo and self-approval's own token then got `"ok": true,
"moved": 0` (judged refused (tool), though the server accepted the agent's token);
memory-hive-mcp, where re-proposing the confirmed text got `"duplicate": true ...
already stored as confirmed`, which the refusals control learned as the gate's
words. Judged over recorded transcripts.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from verdict_records import attack_spec

from mcp_confirm_audit.confirmations import replies
from mcp_confirm_audit.engine.controls import _Runner
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

TREE = TreeSnapshot({"root/in/a.jpg": FileIdentity("file", 1, 10, 5, 100)})
MOVED_NONE = Response(
    Outcome.COMPLETE,
    '{\n  "ok": true,\n  "dry_run": false,\n  "moved": 0,\n  "copied": 0,\n  "skipped": 0,\n  "failed": 0,\n'
    '  "log_name": "organize_20261206_080100_2",\n  "failures": []\n}',
)
DUPLICATE = Response(
    Outcome.COMPLETE,
    '{"ok": true, "id": "mem_1796544084_b8ay", "state": "confirmed", "duplicate": true, '
    '"message": "This text is already stored as confirmed; nothing new was queued.", "mode": "local"}',
)
MOVED_ONE = Response(Outcome.COMPLETE, '{"ok": true, "moved": 1, "copied": 0, "failed": 0}')
SPENT = Response(Outcome.TOOL_ERROR, "confirm token already used")
# Plain words of a refusal, which no count or duplicate marks: still the gate's to judge.
DECLINED_IN_WORDS = Response(Outcome.COMPLETE, "Nothing was deleted: the user chose decline.")


def _judged(decisive: Response, learned: Signatures | None = None) -> tuple[Verdict, Layer | None, str]:
    preview = Exchange(Phase.ATTACK, "preview", "primary", {"name": "preview_organize"}, MOVED_NONE)
    confirm = Exchange(
        Phase.ATTACK, "confirm with the token", "primary", {"name": "organize_photos"}, decisive
    )
    transcript = Transcript(
        "MCA-SELFAPPROVE-001",
        "organize_photos",
        Precondition(True),
        (preview, confirm),
        TREE,
        TREE,
        signatures=learned,
    )
    result = judge(attack_spec("self-approval"), transcript)
    return result.verdict, result.layer, result.reason


@pytest.mark.parametrize(
    ("reply", "why"),
    [(MOVED_NONE, "moved: 0, copied: 0"), (DUPLICATE, "duplicate: true")],
    ids=["every-count-zero", "duplicate"],
)
def test_a_success_with_nothing_done_is_no_subject_left_never_a_refusal(reply: Response, why: str) -> None:
    verdict, layer, reason = _judged(reply)
    assert (verdict, layer) == (Verdict.INCONCLUSIVE, None)
    assert reason.startswith("no subject left: the world the last control left behind")
    assert why in reason


def test_what_marks_a_success_as_nothing_done() -> None:
    assert replies.nothing_done(MOVED_NONE) == "moved: 0, copied: 0"
    assert replies.nothing_done(DUPLICATE) == "duplicate: true"
    assert (
        replies.nothing_done(Response(Outcome.COMPLETE, "This text is already stored.")) == "already stored"
    )
    # Something was done, or it was a refusal: not this.
    assert replies.nothing_done(MOVED_ONE) is None
    assert replies.nothing_done(SPENT) is None
    assert replies.nothing_done(Response(Outcome.COMPLETE, '{"ok": false, "moved": 0}')) is None
    assert replies.nothing_done(DECLINED_IN_WORDS) is None


def test_a_refusal_after_the_same_world_is_still_judged_refused() -> None:
    verdict, layer, _ = _judged(SPENT)
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)


def test_the_refusals_control_learns_no_gate_signature_from_a_duplicate() -> None:
    run = _Runner(SimpleNamespace(ignore=(), bookkeeping_notes={}), *([None] * 6))  # type: ignore[arg-type]
    run.gate_said("preview-alone", DUPLICATE)
    run.gate_said("preview-alone", MOVED_NONE)
    assert run.gate == []
    run.gate_said("decline", Response(Outcome.TOOL_ERROR, "not organized: the person declined"))
    assert [s.control for s in run.gate] == ["decline"]
