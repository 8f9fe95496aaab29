"""A preview that hands out a change id with its token, both taken by the confirming call (mcp-changeset's shape).

`preview_label(bed, label)` answers `{change_id, confirmation_token}`, and `apply_change(change_id,
confirmation_token)` applies exactly the staged change. Nothing but that preview names the change id, so
zero configuration, which fills an argument it knows nothing about with its own value, sent
`apply_change({"change_id": "mcp-confirm-audit", ...})`: "unknown change", the approve control failed
and every attack was inconclusive (found on the PyPI package by a newcomer). The confirming call of the
use the preview was for now carries the preview's `change_id` back (a token not its own, the last
preview of that use's); a token presented for a use nothing previewed (another use's, a forged one)
goes with the change id of a preview made for that use then, its own token never sent.

A preview of the label a bed has already is refused, "nothing to change", as mcp-changeset's notes
refuse the content a note holds. Every use of the action once wrote the same label, so after the
controls' honest one every attack's preview was refused and judged nothing (eight token attacks on
the real server): now each use writes a label of its own (`mcp-confirm-audit #7`), and its subject,
the bed, stays where the controls saw its effect.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.engine.session import AuditRun, AuditSession, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"
FAMILIES = ("token-replay", "token-cross-target", "token-forgery", "wrong-guess")
# The attacks a use that repeats another's values left unjudged: each previews the action first.
JUDGED = (
    "MCA-TOKREUSE-001",
    "MCA-TOKREUSE-003",
    "MCA-TOKOTHER-001",
    "MCA-TOKMINT-001",
    "MCA-TOKMINT-002",
    "MCA-BURN-001",
)
V, W = Verdict.VULNERABLE, Verdict.WEAK


def _audit(catalogue: Catalogue, generation: object, *flaws: str) -> AuditRun:
    factory_args = {"shape": "changeset", "flaws": list(flaws)}
    profile = forked(
        Profile(command=f"py:{SHAPES}:build_server", factory_args=factory_args, call_timeout=10.0)
    )
    return run_audit(
        profile,
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.family in FAMILIES,
    )


def test_zero_config_confirms_with_the_change_id_the_preview_handed_out_and_a_spent_token_is_refused(
    catalogue: Catalogue, generation: object
) -> None:
    run = _audit(catalogue, generation)
    approve = next(c for c in run.controls if c.tool == "apply_change" and c.name == "approve")
    assert approve.passed, approve.detail
    assert "through token" in approve.detail, approve.detail
    # A wrong token for the same use goes with that use's change id: what is learned is the token's refusal.
    refusals = next(c for c in run.controls if c.name == "refusals")
    assert "wrong-handle: refused 'confirmation token invalid" in refusals.detail, refusals.detail
    results = {r.id: r for r in run.results}
    again = results["MCA-TOKREUSE-001"]
    assert (again.verdict, again.layer) == (Verdict.REFUSED, Layer.TOOL), again.evidence
    # The change its ledger applied once, in its own words: the single use, named by its status.
    assert "(status: applied)" in again.reason, again.reason
    # The token of one change presented for the victim's use: the victim's own preview's change id goes
    # with it, and the server refuses a token that is not that change's. Nothing is applied in its name.
    moved = results["MCA-TOKOTHER-001"]
    assert (moved.verdict, moved.layer) == (Verdict.REFUSED, Layer.TOOL), (moved.reason, moved.evidence)
    assert not moved.effect.happened, moved.evidence
    # A token minted for a use nobody previewed: that use is previewed for its change id alone, and the
    # minted token is refused as no token of that change; the decoy's own token, its twin, acted.
    minted = results["MCA-TOKMINT-001"]
    assert (minted.verdict, minted.layer) == (Verdict.REFUSED, Layer.TOOL), (minted.reason, minted.evidence)
    assert any("preview, for the change id the confirming call names" in line for line in minted.evidence)


def test_every_use_previews_a_label_of_its_own_so_each_token_attack_is_judged(
    catalogue: Catalogue, generation: object
) -> None:
    run = _audit(catalogue, generation)
    said = [line for c in run.controls for line in (c.detail, *c.evidence)]
    said += [line for r in run.results for line in (r.reason, *r.evidence)]
    # No use repeated another's label: no preview was refused, and no such refusal was learned as the gate's.
    assert not [line for line in said if "nothing to change" in line]
    results = {r.id: r for r in run.results}
    for attack in JUDGED:
        result = results[attack]
        assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (attack, result.reason)


@pytest.mark.parametrize(
    ("flaw", "found"),
    [
        ("token-reuse", {"MCA-TOKREUSE-001": V, "MCA-TOKREUSE-003": V}),
        ("token-unbound", {"MCA-TOKOTHER-001": V}),
        # Any token applies a change: a forged one, another change's, and the wrong guess itself.
        (
            "token-unchecked",
            {"MCA-TOKMINT-001": V, "MCA-TOKMINT-002": V, "MCA-TOKOTHER-001": V, "MCA-BURN-001": V},
        ),
        ("wrong-guess-burns", {"MCA-BURN-001": W}),
    ],
)
def test_each_flaw_of_the_changeset_is_found_by_its_attacks_and_fools_no_other(
    catalogue: Catalogue, generation: object, flaw: str, found: dict[str, Verdict]
) -> None:
    results = {r.id: r for r in _audit(catalogue, generation, flaw).results}
    for attack in JUDGED:
        result = results[attack]
        if attack in found:
            assert result.verdict is found[attack], (flaw, attack, result.reason, result.evidence)
        else:
            assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (
                flaw,
                attack,
                result.reason,
            )


def test_a_control_in_a_fresh_world_forgets_the_change_ids_the_last_one_handed_out(
    catalogue: Catalogue, generation: object
) -> None:
    """Under `isolation: process` each control takes a fresh target process; the flow zero configuration
    found is the controls' own until they return, so they forget its previews as each world begins.

    What the flow keeps to carry back into a confirming call is what later worlds' previews handed
    out, never approve's change id: that change was staged in a process that is gone.
    """
    factory_args = {"shape": "changeset"}
    profile = Profile(
        command=f"py:{SHAPES}:build_server", factory_args=factory_args, call_timeout=10.0, isolation="process"
    )
    session = AuditSession(forked(profile), catalogue, generation)  # type: ignore[arg-type]
    session.start([])
    try:
        outcome = session.controls("apply_change")
        assert outcome.approve_ok, outcome.results[0].detail
        token = outcome.mechanism
        assert isinstance(token, Token)
        previews = [
            re.findall(r"chg_[0-9a-f]{16}", line)[0]
            for line in outcome.evidence
            if line.startswith("[setup] preview -> preview_label(")
        ]
        # What the flow still holds to carry back: the change ids of the previews it kept.
        held = {
            cid for reply in token.staged_uses.values() for cid in re.findall(r"chg_[0-9a-f]{16}", reply.text)
        }
        assert len(previews) > 1, outcome.evidence
        # Only what the last worlds' previews handed out, never approve's: its change is in a process now gone.
        assert held, token.staged_uses
        assert previews[0] not in held, (held, previews)
        assert held <= set(previews[1:]), (held, previews)
    finally:
        session.close()


def test_a_flow_found_in_a_first_reply_forgets_in_each_fresh_world_the_tokens_the_last_one_handed_out(
    catalogue: Catalogue, generation: object
) -> None:
    """The greenhouse's `challenge` shape: no schema names its token, so the controls find the flow in the
    first reply, and the session knows it only once they return. Each control that takes a fresh target
    process forgets what the previews of the last one handed out: what is kept is of the last world."""
    profile = Profile(
        command=f"py:{SHAPES}:build_server",
        factory_args={"shape": "challenge"},
        call_timeout=10.0,
        isolation="process",
    )
    session = AuditSession(forked(profile), catalogue, generation)  # type: ignore[arg-type]
    session.start([])
    try:
        assert session.plan("drain_tank").mechanism is None
        outcome = session.controls("drain_tank")
        assert outcome.approve_ok, outcome.results[0].detail
        token = outcome.mechanism
        assert isinstance(token, Token)
        handed = [
            re.findall(r'\\"challenge\\": \\"([0-9a-f]{20})', line)[0]
            for line in outcome.evidence
            if line.startswith("[setup] preview -> drain_tank(")
        ]
        # Approve's, the preview alone's and the wrong token's, each in a world of its own.
        assert len(handed) == 3, outcome.evidence
        assert list(token.staged) == handed[-1:], (list(token.staged), handed)
    finally:
        session.close()
