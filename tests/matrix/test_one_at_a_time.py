"""A server that serves one request at a time while its question is open: no stall, verdicts earned.

magnemo-mcp's ask loop holds back every request that arrives while its
`elicitation/create` question is open, until that question ends. A read-only
probe the harness sent then came back only after the question had timed out,
so the person's yes arrived too late and every attack was inconclusive.
`targets/legacy/server.py --one-at-a-time` does the same (a lock over every
call, its question's wait included) and offers `list_root`, a read-only tool a
zero-config audit finds as a probe, whose question count moves on a round that
only asks. The harness learns from the approve control's own question that the
target serves one request at a time, says so, and asks its read-only tools only
when no question is open: the careful server is refused, every attack judged,
and the flawed one is still caught.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION, Shared
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

LEGACY_SERVER = Path(__file__).resolve().parents[2] / "targets" / "legacy" / "server.py"
NOTES = Path(__file__).resolve().parents[2] / "targets" / "notes" / "server.py"
# consent answers the open question; identity-swap probes while it is open (the snapshot after the swap);
# prompt-forging sends one name after another, each asked about (one attack of it: 25 names and more).
FAMILIES = ("consent", "identity-swap")
ONE_OF = ("MCA-PROMPT-001",)
# Two flaws of two families in one server: each is caught by its own family alone.
FLAWS = ("decline-as-accept", "no-identity-check")
# What a probe that stalled until the server's own deadline for its person leaves in a reason.
STALLED = ("no answer within", "question has expired", "did not answer", "within its budget")


def audit(catalogue: Catalogue, *flaws: str, families: Sequence[str] = FAMILIES) -> AuditRun:
    raw = {
        "command": f"py:{LEGACY_SERVER}:build_server",
        # The server's own wait for its person is longer than the harness's bounded look (2 s, LEARNING_BOUND),
        # as magnemo's is. 5 s, not the 8 it was: three rounds of each audit wait until it ends (24 s of an
        # audit's 26 at 8 s). Scaled with the round trip's bound, from one scale.
        "factory_args": {"flaws": list(flaws), "answer_timeout": deadline(5.0), "one_at_a_time": True},
        "tool": "delete_file",
        "call_timeout": deadline(10.0),
        "protocol": "2025-11-25",
    }

    def select(spec: AttackSpec) -> bool:
        return spec.family in families or spec.id in ONE_OF

    profile = profile_from_mapping(raw, source="test")
    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


@pytest.fixture(scope="module")
def careful(catalogue: Catalogue, across_workers: Shared[AuditRun]) -> AuditRun:
    return across_workers("one-at-a-time-careful", lambda: audit(catalogue))


@pytest.fixture(scope="module")
def flawed(catalogue: Catalogue, across_workers: Shared[AuditRun]) -> AuditRun:
    return across_workers("one-at-a-time-flawed", lambda: audit(catalogue, *FLAWS))


def test_the_careful_server_is_refused_with_every_attack_judged_and_none_stalled(careful: AuditRun) -> None:
    assert all(c.passed for c in careful.controls if c.applicable), careful.controls
    found = [(r.id, r.verdict, r.reason) for r in careful.results if r.verdict is not Verdict.REFUSED]
    assert all(v is Verdict.NOT_APPLICABLE for _, v, _ in found), found
    assert {r.family for r in careful.results if r.verdict is Verdict.REFUSED} == {
        *FAMILIES,
        "prompt-forging",
    }
    stalled = [(r.id, r.reason) for r in careful.results if any(s in r.reason for s in STALLED)]
    # No attack ran out of its budget waiting on a question it left open itself.
    assert stalled == []


def test_the_report_names_what_was_learned_from_the_target_s_own_question(careful: AuditRun) -> None:
    learned = next(c for c in careful.controls if c.name == "one-at-a-time")
    assert learned.detail.startswith("serves one request at a time")
    assert "list_root" in learned.detail


def test_a_yes_the_target_refused_as_too_fast_never_passes_the_approve_control(catalogue: Catalogue) -> None:
    # magnemo-mcp refuses a yes faster than a person reads, and records the refusal in the ledger where
    # kept notes go. Taken for the action, it made the approve control pass and every answered consent
    # attack `vulnerable`. The control fails instead and names the key that sets the person's pace.
    raw = {
        "command": f"py:{NOTES}:build_server",
        "factory_args": {"too_fast": 5.0},
        "protocol": "2025-11-25",
        "tool": "handoff",
        "setup": [{"tool": "stage", "args": {"note": {"title": "Deploy checklist"}, "store": "playbooks"}}],
        "args": {"cut": "the rest of the refactor"},
        "call_timeout": 10.0,
    }
    profile = profile_from_mapping(raw, source="test")
    run = run_audit(
        profile, catalogue=catalogue, select=lambda s: s.id == "MCA-CONSENT-004", generation=MATRIX_GENERATION
    )
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed
    assert "refused the yes" in approve.detail
    assert "answer_after" in approve.detail
    assert run.by_id()["MCA-CONSENT-004"].verdict is Verdict.INCONCLUSIVE


def test_the_question_count_that_moves_on_asking_is_never_taken_for_the_action(careful: AuditRun) -> None:
    # list_root's count moves on every question; the attacks' effect is judged where it was seen.
    counted = [(r.id, r.effect.observed) for r in careful.results if r.effect.observed]
    assert counted == []


@pytest.mark.parametrize(
    ("attack", "verdict"),
    [
        ("MCA-CONSENT-001", Verdict.VULNERABLE),
        ("MCA-CONSENT-002", Verdict.VULNERABLE),
        ("MCA-IDSWAP-001", Verdict.VULNERABLE),
        ("MCA-CONSENT-003", Verdict.REFUSED),
    ],
)
def test_the_flaws_are_still_caught_on_a_server_that_serves_one_request_at_a_time(
    flawed: AuditRun, attack: str, verdict: Verdict
) -> None:
    assert any(c.name == "one-at-a-time" for c in flawed.controls)
    result = flawed.by_id()[attack]
    assert result.verdict is verdict, result.reason
