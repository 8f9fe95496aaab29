"""A decline the person never gave is no decline that acted: a staging call that had nothing to stage.

Trial 16, openmymemo 0.3.1: a profile that spells the memory it proposes (`content: "Prefers green tea
in the morning"`, as a newcomer writes it) sends that sentence on every use. The approve control's
person accepts it; the decline control then proposes it again, and openmymemo answers `{"status":
"duplicate", "message": "The user already has this memory; nothing to do."}`, with no id. Nothing was
staged, nobody was asked, nothing was declined and nothing moved, yet review.md said "control decline
(high): a decline acted on memory_propose". targets/memory is that shape (the person's own review CLI
accepts, and their accept is the change). Its flawed twins are still found: one applies every proposal
at once after the first yes (no id, nobody asked), the other writes what the person rejected.
"""

from __future__ import annotations

from conftest import MATRIX_GENERATION
from memory_target import memory_profile

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, ControlResult

SENTENCE = "Prefers green tea in the morning"


def audit(catalogue: Catalogue, content: str, *flaws: str, review_flaws: tuple[str, ...] = ()) -> AuditRun:
    profile = memory_profile(*flaws, content=content, decline_flaws=review_flaws)

    def select(spec: AttackSpec) -> bool:
        return spec.family == "self-approval"  # the controls are what this proves: one cheap family

    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def _control(run: AuditRun, name: str) -> ControlResult:
    found = [c for c in run.controls if c.name == name]
    assert len(found) == 1, run.controls
    return found[0]


def test_a_sentence_the_person_already_accepted_stages_nothing_and_no_decline_is_reported_acting(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, SENTENCE)
    assert _control(run, "approve").passed, _control(run, "approve").detail
    decline = _control(run, "decline")
    assert not decline.finding, decline
    assert decline.could_not_begin, decline
    assert "nothing to do" in decline.detail, decline.detail
    assert not [c for c in run.controls if c.finding], run.controls
    # "The user already has this memory" is no way this gate holds a call: nothing is learned from it.
    learned = [c.detail for c in run.controls if c.name == "refusals"]
    assert not any("already has this memory" in d for d in learned), learned


def test_a_memory_that_applies_a_proposal_with_no_id_and_nobody_asked_is_still_found(
    catalogue: Catalogue,
) -> None:
    # Each use proposes a sentence of its own (the harness's filler, marked per use): none is a duplicate.
    # After the approve control's yes, the next proposal answers "applied" with no id: no id is never
    # an excuse for what the call did with nobody asked.
    run = audit(catalogue, "mcp-confirm-audit", "applies-after-first")
    acted = [c for c in run.controls if c.finding]
    assert acted, run.controls
    assert any("acted" in c.detail and "memories.jsonl" in c.detail for c in acted), acted


def test_a_review_that_writes_what_the_person_rejected_fails_the_decline_control(
    catalogue: Catalogue,
) -> None:
    # The harness's filler as the content is marked per use, so each use proposes its own sentence.
    run = audit(catalogue, "mcp-confirm-audit", review_flaws=("decline-acts",))
    decline = _control(run, "decline")
    assert decline.finding, decline
    assert decline.detail.startswith("the action took effect on the person's decline"), decline.detail
