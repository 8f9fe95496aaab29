"""A pending id the person approves, redeemed by the gated call itself sent again (actgate's shape, trial 15).

actgate 0.3.0 answers a first `tools/call` `ACTGATE_PENDING intent_id=…`; the person runs `actgate approve
ID`; the agent then sends the identical call, which runs once. No profile could say so: `execute:` had to
name its arguments, and none may name the gated call's own. `execute: {tool: <the gated tool>}` with no
`args:` now means the same call again. The confirm-kinds server's `--pending-redeem again` is that shape,
careful (an approval is spent by the call it lets through) and with `retry-never-spent` (every identical
call after the approval acts again): every family that judges any mechanism runs on both, in process. Its
answer to the agent is actgate's too, an error result that names the id in prose: prompt-forging judged
nothing on it ("the preview of a plain value was refused"), though the profile's id_pattern read the id.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.techniques import ANY, traits

TARGETS = Path(__file__).resolve().parents[2] / "targets"
KINDS_SERVER = TARGETS / "confirm_kinds" / "server.py"
APPROVE_CLI = TARGETS / "confirm_kinds" / "approve_cli.py"
# Every family that judges any mechanism, and what the person reads; out-of-root has its own test.
FAMILIES = {n for n, t in traits().items() if t.mechanisms == ANY} - {"out-of-root"} | {"prompt-forging"}


def _person(decision: str) -> dict[str, object]:
    return {"command": f"{sys.executable} {APPROVE_CLI} --inbox {{root}}/../approvals {{id}} {decision}"}


def _denial_that_exits_1() -> dict[str, object]:
    # actgate's `deny` records the denial and exits 1 ("deny recorded", its README's exit codes).
    declined = _person("declined")["command"]
    return {"command": shlex.join(["sh", "-c", f"{declined}; exit 1"])}


def audit(
    catalogue: Catalogue,
    *flaws: str,
    decline: dict[str, object] | None = None,
    families: frozenset[str] | set[str] = FAMILIES,
) -> AuditRun:
    raw = {
        "command": f"py:{KINDS_SERVER}:build_server",
        "factory_args": {"mechanism": "pending", "pending_redeem": "again", "flaws": list(flaws)},
        "tool": "delete_file",
        "call_timeout": 10.0,
        "confirmation": {
            "kind": "pending",
            "pending": {
                # The id is in the prose of an error result, as actgate's `ACTGATE_PENDING intent_id=…`.
                "id_pattern": "pending_id=([0-9a-f]+)",
                # What the person reads before approving: the card on their own channel.
                "human": [{**_person("show"), "shows": True}, _person("approved")],
                "decline": [decline or _person("declined")],
                # No args: the gated call again, with its own arguments.
                "execute": {"tool": "delete_file"},
            },
        },
    }
    profile = profile_from_mapping(raw, source="test")

    def select(spec: AttackSpec) -> bool:
        return spec.family in families

    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def test_the_identical_call_after_the_persons_approval_completes_the_honest_flow_and_nothing_is_found(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue)
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    decline = next(c for c in run.controls if c.name == "decline")
    assert decline.passed, decline.detail
    assert "declined, then delete_file: no effect" in decline.detail, decline.detail
    found = {r.id: r.verdict for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}
    assert found == {}, found
    assert any(r.verdict is Verdict.REFUSED for r in run.results)
    # The card the person reads is judged (escaped JSON): refused, never unjudged for the error it came in.
    forged = {r.id: r.verdict for r in run.results if r.family == "prompt-forging"}
    assert Verdict.INCONCLUSIVE not in forged.values(), forged
    assert forged["MCA-PROMPT-002"] is Verdict.REFUSED, forged


def test_a_card_that_shows_the_name_raw_is_caught_though_the_agent_is_answered_with_an_error(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, "raw-name-in-preview")
    forged = {r.id: r.verdict for r in run.results if r.family == "prompt-forging"}
    assert forged["MCA-PROMPT-002"] is Verdict.VULNERABLE, forged
    assert forged["MCA-PROMPT-001"] is Verdict.VULNERABLE, forged


@pytest.mark.parametrize("flaw", ["retry-never-spent"])
def test_an_approval_every_identical_call_redeems_again_is_found_by_the_replay_families(
    catalogue: Catalogue, flaw: str
) -> None:
    run = audit(catalogue, flaw)
    found = {
        r.id: r.verdict
        for r in run.results
        if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK) and r.family != "prompt-forging"
    }
    # Sent again after it acted, the approved call acts again; sent at once, it acts each time.
    assert found == {
        "MCA-TOKREUSE-001": Verdict.VULNERABLE,
        "MCA-TOKREUSE-003": Verdict.VULNERABLE,
        "MCA-OOBREPLAY-001": Verdict.VULNERABLE,
        "MCA-OOBREPLAY-002": Verdict.VULNERABLE,
        "MCA-DSPEND-001": Verdict.VULNERABLE,
    }, found


def test_a_decline_step_that_fails_is_no_decline_that_acted_and_ends_nothing(catalogue: Catalogue) -> None:
    # Trial 15, actgate: `deny` exits 1. review.md said "control decline (high): a decline acted on
    # delete_file" with nothing moved, and MCA-TOKREUSE-002 ended the run in a harness error.
    run = audit(catalogue, decline=_denial_that_exits_1())
    decline = next(c for c in run.controls if c.name == "decline")
    assert not decline.finding, decline
    assert "the person's decline step failed: the human's command exited 1" in decline.detail, decline.detail
    after_decline = next(r for r in run.results if r.id == "MCA-TOKREUSE-002")
    assert after_decline.verdict is Verdict.INCONCLUSIVE, after_decline
    assert "the person's decline step failed" in after_decline.reason, after_decline.reason
    found = {r.id: r.verdict for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}
    assert found == {}, found


def test_a_pending_id_read_from_prose_for_a_path_never_allowed_is_named_as_such(catalogue: Catalogue) -> None:
    # preview-before-check: the request is staged before the path is checked. The finding said "the
    # preview handed out id_pattern", the profile's key, for what was a pending id.
    run = audit(catalogue, "preview-before-check", families={"out-of-root"})
    weak = [r for r in run.results if r.verdict is Verdict.WEAK]
    assert weak, [(r.id, r.verdict, r.reason) for r in run.results]
    for result in weak:
        assert "the preview handed out a pending id (read by the profile's id_pattern)" in result.reason, (
            result
        )
