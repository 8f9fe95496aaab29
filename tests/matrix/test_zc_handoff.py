"""Zero configuration on an action that asks only about what another tool made (engine/makers).

`zc_shapes --shape handoff` (magnemo-mcp's stage and handoff): `handoff` asks once about every note
`stage_note` left waiting and files them on a yes; with nothing waiting it answers normally and asks
nothing. No profile: the approval files what the first control found waiting, the refusal controls then
find nothing to ask about, and the session learns `stage_note` as a setup call before every use of
`handoff`, each attack in a fresh world. Careful, every attack on `handoff` is `refused` (none
`inconclusive`); with `decline-acts`, the answers that say no are `vulnerable`, which they can only be
where a note was waiting to be filed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Shared
from deadline import scaled

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"
# The person's answers, one approval spent at once, the agent alone, and a client that cannot ask.
ATTACKS = (
    "MCA-CONSENT-001",
    "MCA-CONSENT-002",
    "MCA-CONSENT-003",
    "MCA-DSPEND-001",
    "MCA-SELFAPPROVE-001",
    "MCA-DOWNGRADE-001",
)
# What a no in any form does on `decline-acts`: it files what waited.
SAYS_NO = ("MCA-CONSENT-001", "MCA-CONSENT-002", "MCA-CONSENT-003")


def _audit(
    catalogue: Catalogue,
    generation: object,
    *flaws: str,
    shape: str = "handoff",
    only: tuple[str, ...] = ATTACKS,
) -> AuditRun:
    factory = {"shape": shape, "flaws": list(flaws)}
    return run_audit(
        scaled(Profile(command=f"py:{SHAPES}:build_server", factory_args=factory, call_timeout=10.0)),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.id in only,
    )


Audit = Callable[..., AuditRun]


@pytest.fixture(scope="module")
def audit(catalogue: Catalogue, generation: object, across_workers: Shared[AuditRun]) -> Audit:
    def run(*flaws: str) -> AuditRun:
        key = "zc-handoff-" + ("-".join(flaws) or "careful")
        return across_workers(key, lambda: _audit(catalogue, generation, *flaws))

    return run


@pytest.mark.parametrize("flawed", [False, True], ids=["careful", "decline-acts"])
def test_every_attack_on_handoff_is_judged_with_something_waiting(audit: Audit, flawed: bool) -> None:
    run = audit(*(["decline-acts"] if flawed else []))
    verdicts = {r.id: r.verdict for r in run.results}
    expected = {i: Verdict.VULNERABLE if flawed and i in SAYS_NO else Verdict.REFUSED for i in ATTACKS}
    assert verdicts == expected, {r.id: r.reason for r in run.results}
    assert {r.tool for r in run.results} == {"handoff"}
    if not flawed:
        # The gate's own no; a client that cannot draw the form is refused by the protocol check first.
        layers = {r.id: r.layer for r in run.results}
        assert layers == {i: Layer.PROTOCOL if "DOWNGRADE" in i else Layer.TOOL for i in ATTACKS}, layers
    # The maker alone is never audited: it neither asks nor shows an effect.
    assert "stage_note: did not ask, and showed no effect" in run.left_out, run.left_out


@pytest.mark.parametrize("flawed", [False, True], ids=["careful", "decline-acts"])
def test_the_controls_record_that_the_maker_runs_before_every_use(audit: Audit, flawed: bool) -> None:
    run = audit(*(["decline-acts"] if flawed else []))
    maker = [c for c in run.controls if c.tool == "handoff" and c.name == "maker"]
    assert len(maker) == 1, [(c.name, c.detail) for c in run.controls]
    assert maker[0].passed, maker
    said = maker[0].detail
    # Why: a refusal control found nothing to ask about in the world the approval left (the target's words).
    assert "handoff found nothing to ask about once an approval had used up what waited" in said, said
    assert "not asked: nothing waits" in said, said
    assert "stage_note runs before every use of handoff" in said, said
    # With it, every refusal control asked (none left unjudged), and approve kept the one note it made.
    refusals = {c.name: c for c in run.controls if c.name in ("decline", "cancel", "negative")}
    assert all(c.applicable for c in refusals.values()), refusals
    assert all(c.passed is not flawed for c in refusals.values()), refusals
    chosen = [c.detail for c in run.controls if c.tool == "handoff" and c.name == "isolation"]
    assert len(chosen) == 1, run.controls
    assert "every attack on handoff gets a fresh target process and root" in chosen[0], chosen


def test_each_attack_asks_about_the_one_note_its_own_setup_staged(audit: Audit) -> None:
    run = audit()
    for result in run.results:
        if result.id == "MCA-DOWNGRADE-001":
            continue  # a client that declares no elicitation is never asked
        evidence = "\n".join(result.evidence)
        staged = evidence.find("setup 1: stage_note")
        asked = evidence.find("notes staged since you left")
        assert -1 < staged < asked, (result.id, evidence[:1500])
        # A fresh world each: what earlier attacks left waiting is no part of this one's subject.
        assert '"1 notes staged since you left' in evidence, (result.id, evidence[:1500])


def test_an_action_that_never_asked_because_nothing_was_ever_made_learns_its_maker_too(
    catalogue: Catalogue, generation: object
) -> None:
    # `handoff` listed first: its controls run before any tool staged a note, so it never asks at all.
    run = _audit(catalogue, generation, shape="handoff-first", only=("MCA-CONSENT-001",))
    maker = [c.detail for c in run.controls if c.tool == "handoff" and c.name == "maker"]
    assert len(maker) == 1, [(c.name, c.detail) for c in run.controls]
    assert maker[0].startswith("handoff never asked, and nothing moved"), maker
    assert "not asked: nothing waits" in maker[0], maker
    assert {r.id: r.verdict for r in run.results} == {"MCA-CONSENT-001": Verdict.REFUSED}, run.results
