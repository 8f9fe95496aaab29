"""A pending flow the person approves on their own channel, beside an approve tool the agent can call.

index-memory-vault 0.3.1 (trial 13): `save_memory` stages a memory, the person verifies it with
`imv approve {id}`, and the server also offers the agent `approve_memory(memory_id)`, which says
"Review is a human-only action" unless its admin sets IMV_ALLOW_AGENT_REVIEW=1. The audit once judged
self-approval `refused (tool)` resting on the staging call's reply (it tried nothing: the profile
named no approve call of the agent's), and ungated `refused (tool)` on `approve_memory`'s "not found"
for a made-up id, while with the switch on the agent verified its own memory.

targets/desk/server.py in that shape: `--asks pending-approval --approval acts` (the person's
approval is itself the booking), `--review-tool` offers `approve_booking(ref)`, which refuses a held
request as the person's to approve, and the flaw `agent-approves` makes it approve. Self-approval
owns the agent approving its own request (ungated leaves the gate's own approve step to it): the
careful tool refuses the real staged ref (refused, by the tool), the flawed one books it (vulnerable),
and a desk with no such tool gives the agent nothing to try (not applicable, never refused).
"""

from __future__ import annotations

from pathlib import Path

from conftest import forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.channels.human import Command
from mcp_confirm_audit.confirmations.pending import Human, Pending
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import Profile

DESK = Path(__file__).resolve().parents[2] / "targets" / "desk" / "server.py"
FAMILIES = frozenset({"self-approval", "ungated"})


def _audit(catalogue: Catalogue, generation: object, **factory_args: object) -> AuditRun:
    profile = forked(
        Profile(
            command=f"py:{DESK}:build_server",
            factory_args={"asks": "pending-approval", "approval": "acts", **factory_args},
            call_timeout=10.0,
            tool="book",
            isolation="process",
            confirmation=Pending(
                id_from="ref", human=Human(approve=(Command("touch {root}/../desk-inbox/{id}.approved"),))
            ),
        )
    )
    return run_audit(
        profile,
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.family in FAMILIES,
    )


def _results(run: AuditRun) -> dict[str, Result]:
    approve = next(c for c in run.controls if c.tool == "book" and c.name == "approve")
    assert approve.passed, approve.detail
    return {r.id: r for r in run.results if r.tool == "book"}


def test_an_approve_tool_that_refuses_the_agent_the_staged_request_is_a_refusal_by_the_tool(
    catalogue: Catalogue, generation: object
) -> None:
    results = _results(_audit(catalogue, generation, review_tool=True))
    selfapprove = results["MCA-SELFAPPROVE-001"]
    assert (selfapprove.verdict, selfapprove.layer) == (Verdict.REFUSED, Layer.TOOL), selfapprove.reason
    # It rests on the tool's refusal of the ref the attack staged, never on the staging call's reply.
    assert "approving is the person's" in selfapprove.reason, selfapprove.reason
    assert any("approve_booking" in line and "mcp-confirm-audit" not in line for line in selfapprove.evidence)
    # The gate's own approve step is self-approval's: ungated never sends it a made-up ref.
    ungated = results["MCA-UNGATED-001"]
    assert not any("approve_booking" in line for line in ungated.evidence), ungated.evidence
    assert ungated.verdict is not Verdict.VULNERABLE, ungated.reason


def test_an_approve_tool_the_agent_can_use_on_its_own_request_is_self_approval(
    catalogue: Catalogue, generation: object
) -> None:
    results = _results(_audit(catalogue, generation, review_tool=True, flaws=frozenset({"agent-approves"})))
    selfapprove = results["MCA-SELFAPPROVE-001"]
    assert (selfapprove.verdict, selfapprove.layer) == (Verdict.VULNERABLE, Layer.NONE), selfapprove.reason
    assert "approve_booking" in selfapprove.reason, selfapprove.reason
    # One finding, self-approval's: ungated does not count the same approval again.
    assert results["MCA-UNGATED-001"].verdict is not Verdict.VULNERABLE, results["MCA-UNGATED-001"].reason


def test_with_no_approve_tool_the_agent_has_nothing_to_try_and_nothing_is_refused(
    catalogue: Catalogue, generation: object
) -> None:
    selfapprove = _results(_audit(catalogue, generation))["MCA-SELFAPPROVE-001"]
    assert selfapprove.verdict is Verdict.NOT_APPLICABLE, selfapprove.reason
    assert "nothing was tried beyond staging" in selfapprove.reason, selfapprove.reason
