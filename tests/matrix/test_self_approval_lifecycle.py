"""The agent approves its own pending memory with its own lifecycle tool: forget it, then restore it.

Trial 16, apiary-memory 0.2.0: `propose` queues a memory for the person's `memory-hive-mcp-cli approve ID`,
and its module says "There is no approve in the MCP tool surface". But the agent's `manage` tool forgets
any entry, a pending one too (no state check), and `restore` makes a forgotten entry confirmed memory:
two calls of the agent's own, and nobody was asked. MCA-SELFAPPROVE-001 said `not_applicable` ("the agent
alone has no call to complete the flow with"): it tried nothing where the person's approval acts alone.
Now the agent's tools that take the staged id with a closed set of actions are tried on it, each action
alone and each ordered pair. targets/memory's `manage` is that tool: careful (only accepted memory is
forgotten) and with `--flaw forget-any-state`.
"""

from __future__ import annotations

from conftest import MATRIX_GENERATION
from memory_target import memory_profile

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Verdict

ATTACK = "MCA-SELFAPPROVE-001"


def audit(catalogue: Catalogue, *flaws: str) -> AuditRun:
    profile = memory_profile(*flaws)
    return run_audit(
        profile, catalogue=catalogue, select=lambda spec: spec.id == ATTACK, generation=MATRIX_GENERATION
    )


def test_a_lifecycle_tool_that_never_decides_a_waiting_proposal_is_refused_having_been_tried(
    catalogue: Catalogue,
) -> None:
    result = audit(catalogue).by_id()[ATTACK]
    assert result.verdict is Verdict.REFUSED, (result.verdict, result.reason, result.evidence)
    assert any("manage: forget on the staged id" in line for line in result.evidence), result.evidence
    assert any("none made the effect" in line for line in result.evidence), result.evidence


def test_an_agent_that_forgets_and_restores_its_own_proposal_approved_it_and_is_found(
    catalogue: Catalogue,
) -> None:
    result = audit(catalogue, "forget-any-state").by_id()[ATTACK]
    assert result.verdict is Verdict.VULNERABLE, (result.verdict, result.reason, result.evidence)
    assert any("manage: forget then restore on the staged id" in line for line in result.evidence), (
        result.evidence
    )
