"""Zero configuration reaches a gate behind strict arguments, a read-only planner and a world that carries over.

targets/desk/server.py books a slot: `book(plan_id)` needs a plan that only
the read-only `plan_booking` mints, from a slot `list_slots` names (its result
only), an E.164 phone and a date no earlier than today; a booked slot stays
booked. Nothing is configured: a careful desk has no finding, and a flaw is
found, whichever way `book` asks (MRTR, or a payload of its own).

Nothing about the target is configured. The careful desks' processes are forked from a zygote that
imported the SDK (`zygote:` says only how a process starts, not what is audited), and the desks that
ask with a payload or carry a flaw are built in process (what the audit reads of a payload or a flaw
is no matter of processes; a world that carries over, isolated a process per attack, is the careful
desk's proof). A process per attack started by its own interpreter, the start a profile without
`zygote:` gets, is test_transports.py's (over HTTP).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from conftest import Shared, forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.channels.human import Command
from mcp_confirm_audit.confirmations.pending import Human, Pending
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile

DESK = Path(__file__).resolve().parents[2] / "targets" / "desk" / "server.py"


def _audit(catalogue: Catalogue, generation: object, families: set[str], *options: str) -> AuditRun:
    command = shlex.join([sys.executable, str(DESK), "--root", "{root}", *options])
    profile = forked(Profile(command=command, call_timeout=10.0))
    return run_audit(
        profile,
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.family in families,
    )


def _built(catalogue: Catalogue, generation: object, families: set[str], **factory_args: object) -> AuditRun:
    """The desk built in process (`build_server(root, **factory_args)`): what a payload or a flaw does to the
    audit is no matter of processes, which the careful desks above and below prove over stdio."""
    profile = forked(Profile(command=f"py:{DESK}:build_server", factory_args=factory_args, call_timeout=10.0))
    return run_audit(
        profile,
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.family in families,
    )


def _control(run: AuditRun, name: str, tool: str = "book") -> str | None:
    found = [c for c in run.controls if c.tool == tool and c.name == name]
    return found[0].detail if found else None


@pytest.fixture(scope="module")
def careful_desk(catalogue: Catalogue, generation: object, across_workers: Shared[AuditRun]) -> AuditRun:
    """The careful desk, its command alone: consent and replay, one process per attack as its world needs."""
    return across_workers(
        "zero-config-desk-careful", lambda: _audit(catalogue, generation, {"consent", "replay"})
    )


def test_a_careful_desk_is_reached_with_nothing_configured_and_refuses_every_attack(
    careful_desk: AuditRun,
) -> None:
    run = careful_desk
    approve = next(c for c in run.controls if c.tool == "book" and c.name == "approve")
    assert approve.passed, approve.detail
    assert "tool:list_bookings" in approve.detail, approve.detail
    assert all(c.passed for c in run.controls if c.tool == "book" and c.applicable), run.controls
    booked = [r for r in run.results if r.tool == "book"]
    assert booked, run.results
    assert {(r.verdict, r.layer) for r in booked} <= {
        (Verdict.REFUSED, Layer.TOOL),
        (Verdict.REFUSED, Layer.SDK_BOUNDARY),
        (Verdict.REFUSED, Layer.PROTOCOL),
    }, [(r.id, r.verdict, r.reason) for r in booked]


def test_a_world_that_carries_over_is_isolated_and_the_controls_say_why(careful_desk: AuditRun) -> None:
    run = careful_desk
    why = _control(run, "isolation")
    assert why is not None, run.controls
    assert why.startswith("isolation: process was chosen"), why
    assert "already booked" in why, why
    # Every attack then got a process of its own: the slot is free again for each.
    assert run.processes_started >= len(run.results), run.processes_started


def test_a_world_that_does_not_carry_over_keeps_one_process(catalogue: Catalogue, generation: object) -> None:
    run = _audit(catalogue, generation, {"consent"}, "--world", "keeps")
    assert _control(run, "isolation") is None, run.controls
    assert all(c.passed for c in run.controls if c.tool == "book" and c.applicable), run.controls


def test_a_decline_that_books_is_found_with_nothing_configured(
    catalogue: Catalogue, generation: object
) -> None:
    run = _built(catalogue, generation, {"consent"}, flaws=["decline-acts"])
    assert run.by_id()["MCA-CONSENT-001"].verdict is Verdict.VULNERABLE


@pytest.mark.parametrize("asks", ["decision-ask", "needs-confirm"])
def test_a_payload_that_asks_is_driven_by_its_own_fields(
    catalogue: Catalogue, generation: object, asks: str
) -> None:
    careful = _built(catalogue, generation, {"token-replay"}, asks=asks, world="keeps")
    approve = _control(careful, "approve")
    assert approve is not None, careful.controls
    assert "through token" in approve, approve
    reuse = {r.id: r for r in careful.results if r.tool == "book"}["MCA-TOKREUSE-001"]
    assert reuse.verdict is Verdict.REFUSED, reuse.evidence
    flawed = _built(catalogue, generation, {"token-replay"}, asks=asks, world="keeps", flaws=["ticket-reuse"])
    reused = {r.id: r for r in flawed.results if r.tool == "book"}["MCA-TOKREUSE-001"]
    assert reused.verdict is Verdict.VULNERABLE, reused.evidence


def test_a_pending_payload_nobody_can_approve_is_a_gate_that_needs_a_profile_not_an_inert_tool(
    catalogue: Catalogue, generation: object
) -> None:
    run = _built(catalogue, generation, {"self-approval"}, asks="pending-approval")
    assert not any(line.startswith("book:") for line in run.left_out), run.left_out
    approve = _control(run, "approve")
    assert approve is not None, run.controls
    assert "pending" in approve, approve
    assert "human" in approve, approve


def test_a_pending_payload_the_agent_can_approve_itself_is_a_finding(
    catalogue: Catalogue, generation: object
) -> None:
    run = _built(catalogue, generation, {"self-approval"}, asks="pending-approval", flaws=["agent-approves"])
    result = {r.id: r for r in run.results if r.tool == "book"}["MCA-SELFAPPROVE-001"]
    assert result.verdict in (Verdict.VULNERABLE, Verdict.WEAK), result.evidence
    assert result.layer is Layer.NONE


def test_a_pending_flow_whose_human_approval_is_itself_the_action_is_driven_to_its_effect(
    catalogue: Catalogue, generation: object
) -> None:
    command = shlex.join(
        [sys.executable, str(DESK), "--root", "{root}", "--asks", "pending-approval", "--approval", "acts"]
    )
    profile = forked(
        Profile(
            command=command,
            call_timeout=10.0,
            tool="book",
            isolation="process",
            confirmation=Pending(
                id_from="ref", human=Human(approve=(Command("touch {root}/../desk-inbox/{id}.approved"),))
            ),
        )
    )
    run = run_audit(
        profile,
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.family in ("replay", "token-replay"),
    )
    approve = _control(run, "approve")
    assert approve is not None, run.controls
    assert "through pending" in approve, approve
    assert "list_bookings" in approve, approve
    # No call of the agent's presents the id again: nothing to replay, never a harness error.
    again = {r.id: r for r in run.results}["MCA-TOKREUSE-001"]
    assert again.verdict is Verdict.NOT_APPLICABLE, again.reason
