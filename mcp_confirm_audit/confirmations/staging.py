"""A staging reply, read one way wherever it is read: the action waits for its approval, or it was refused.

A reply a flow reads a handle in (its pending id or token, by the profile's `id_from`, `id_pattern` or
`token_from`, or the field detection names) stages the action: the controls read it so, and so must
every technique that sends the gated call itself. Its own words often say "not done" in a field that
reads as a refusal anywhere else: rei-automator-mcp's `{"action_id": ..., "approved": false}`,
cmd-line-mcp's `{"success": false, "requires_approval": true, "session_id": ..., "error": "... requires
approval"}`, ai-runtime-guard's `[POLICY BLOCK] ... approval_token=<hex>`. Not yet approved is no
refusal. A reply that carries an id and refuses in words of its own (`{"status": "refused", "error":
"file type not allowed", "request_id": ...}`) staged nothing: the id is only beside its refusal.
"""

from __future__ import annotations

from ..models import Outcome, Response
from .base import AgentFlow, Preview
from .detect import asking_payload
from .pending import ID_PATTERN
from .replies import payload, refusal

# Fields whose words say why a call was refused: a reply with one of them refused, whatever else it says.
_REASONS = ("error", "errors", "reason", "detail")


def refused(shown: Preview) -> str | None:
    """Why a staging call's reply is a refusal ("status: refused"), or None: it staged, asked or acted.

    With a handle handed out, a refusal field says only that the action waits when the reply asks for
    the approval (`requires_approval: true`, `status: pending_approval`), when the id came from the
    profile's `id_pattern` (a reply that is an error by design, actgate's and ai-runtime-guard's), or when
    the refusal is a bare false (`approved: false`, `ok: false`, `success: false`) with no reason given.
    """
    why = refusal(shown.response)
    if why is None or shown.handle is None:
        return why
    if shown.field == ID_PATTERN or asking_payload(shown.response) is not None:
        return None
    return None if _not_yet(shown.response, why) else why


def _not_yet(response: Response, why: str) -> bool:
    """Whether a refusal is a field's bare false, with no reason beside it: "not done yet", not "no"."""
    data = payload(response) if response.outcome is Outcome.COMPLETE else None
    return (
        data is not None
        and why.endswith(": false")
        and data.get(why.removesuffix(": false")) is False
        and not any(data.get(k) for k in _REASONS)
    )


def staged(flow: AgentFlow | None, response: Response) -> Preview | None:
    """The reply to a call of the gated tool as `flow`'s staging reply (its handle read), or None: it staged nothing.

    None too for MRTR (no flow): its question is the reply's own, never a handle in a result.
    """
    if flow is None:
        return None
    shown = flow.preview_of(response)
    return shown if shown.handle is not None and refused(shown) is None else None
