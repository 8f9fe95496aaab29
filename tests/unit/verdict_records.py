"""What verdict tests build transcripts from: catalogue entries and the answers a target gives."""

from __future__ import annotations

from typing import Any

from mcp_confirm_audit.models import AttackSpec, Outcome, Response


def attack_spec(family: str, *, id: str = "MCA-TEST-001", level: str = "MUST", **fields: Any) -> AttackSpec:
    """A catalogue entry of `family`, judged by the technique of the same name unless told otherwise."""
    fields.setdefault("technique", family)
    fields.setdefault("severity", "high")
    return AttackSpec(id=id, slug="t", family=family, title="t", level=level, **fields)


# The SDK's RequestStateBoundary refusing a state it did not seal, or no longer accepts.
SDK_BOUNDARY_REFUSAL = Response(
    Outcome.RPC_ERROR, "Invalid or expired requestState", -32602, {"reason": "invalid_request_state"}
)
HUNG = Response(Outcome.TRANSPORT, "no answer within 5s")
