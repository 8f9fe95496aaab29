"""A staging reply learned as what a held call looks like only when its shape has words of its own.

index-memory-vault's `save_memory` answers `{"saved": {...}, "note": "..."}`: every key and value is
quoted, so with them taken out its shape was "null null null" (its three null fields), a shape any
other JSON reply with three nulls has (`get_memory`'s result). Learned as the gate holding a call, it
would have read an unrelated reply as a refusal; it is not learned. A reply that says something
("Awaiting your approval") still is.
"""

from __future__ import annotations

import json

from mcp_confirm_audit.confirmations import replies
from mcp_confirm_audit.models import Outcome, Response

STAGED_MEMORY = json.dumps(
    {
        "saved": {"id": "b72e25fcce97", "q_state": "needs_review", "reviewed_by": None, "reviewed_at": None},
        "note": "q_state=needs_review. A human must approve this memory before it is served as verified.",
        "review_note": None,
    },
    indent=2,
)
READ_MEMORY = json.dumps({"result": {"id": "7f309983cb3a", "a": None, "b": None, "c": None}}, indent=2)
STAGED_BOOKING = json.dumps(
    {"status": "pending_approval", "pending_id": "p-1", "message": "Awaiting your approval."}
)


def test_a_json_reply_of_quoted_strings_and_nulls_teaches_no_shape() -> None:
    staged = replies.signature("preview-alone", Response(Outcome.COMPLETE, STAGED_MEMORY))
    read = replies.signature("preview-alone", Response(Outcome.COMPLETE, READ_MEMORY))
    # The two replies have nothing in common but their literals, and the shape could not tell them apart.
    assert staged.shape == read.shape == "null null null"
    assert not replies.worded(staged)


def test_a_reply_that_says_why_the_call_is_held_is_learned() -> None:
    staged = replies.signature("preview-alone", Response(Outcome.COMPLETE, STAGED_BOOKING))
    assert replies.worded(staged), staged
    assert "awaiting your approval" in staged.shape
