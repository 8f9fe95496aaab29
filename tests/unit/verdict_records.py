"""What verdict tests build transcripts from: catalogue entries and the answers a target gives."""

from __future__ import annotations

from typing import Any

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import (
    AttackSpec,
    AtTheGate,
    Exchange,
    FileIdentity,
    Outcome,
    Phase,
    Precondition,
    Response,
    Result,
    Transcript,
    TreeSnapshot,
    Verdict,
)


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


# ungated: other tools called plainly beside a gated one, whose gate removed the case's victim.
UNGATED_CASE = "root/007-mca-ungated"
UNGATED_TREE = TreeSnapshot({f"{UNGATED_CASE}/victim.txt": FileIdentity("file", 1, 10, 5, 100)})


def plain_call(name: str, arguments: dict[str, Any], response: Response) -> Exchange:
    """A call to another tool as ungated makes it: no approval, no question asked for."""
    request = {"name": name, "arguments": arguments}
    return Exchange(Phase.ATTACK, f"{name}, plainly", "primary", request, response)


def judged_ungated(gated_tool: str, *calls: Exchange, id: str = "MCA-TEST-001") -> Result:
    """ungated's verdict on `calls`, with the tree unchanged around them."""
    transcript = Transcript(
        id,
        gated_tool,
        Precondition(True),
        calls,
        UNGATED_TREE,
        UNGATED_TREE,
        case_dir=UNGATED_CASE,
        gate=AtTheGate(("removed case/victim.txt",)),
        effect_verdict=(Verdict.WEAK, "another tool acted"),
    )
    return judge(attack_spec("ungated", id=id), transcript)
