"""A profile names a field of the preview's reply in a token's `into:` (mcp-changeset's change id).

mcp-changeset's `apply_change(change_id, confirmation_token)` takes both values its preview handed out.
Zero configuration carries the change id back (test_zero_config_changeset.py), but a profile could not
say so: `into: {change_id: '{change_id}', ...}` was refused at load (no step saved `{change_id}`), so
a newcomer could not write the flow at all (trial 13). `{preview.change_id}` names the field of the
preview's reply: `targets/changeset-preview-field.yaml` on the greenhouse's `changeset` shape completes
the honest flow, and the token attacks are judged both ways. A use never previewed has no reply to name:
its change id is left out, never the harness's own value, so the minted token is not judged on a reply
about a change that does not exist.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from conftest import forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.engine.session import AuditRun, AuditSession, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile, load_profile

PROFILE = Path(__file__).resolve().parents[2] / "targets" / "changeset-preview-field.yaml"
FAMILIES = ("token-replay", "token-cross-target", "token-forgery")


CHANGE_ID = re.compile(r"chg_[0-9a-f]{16}")
TOKEN = re.compile(r"confirm_[\w-]{22}")


def _profile(*flaws: str) -> Profile:
    profile = load_profile(PROFILE)
    return dataclasses.replace(profile, factory_args={**profile.factory_args, "flaws": list(flaws)})


def _audit(catalogue: Catalogue, generation: object, profile: Profile, *families: str) -> AuditRun:
    return run_audit(
        forked(profile),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.family in (families or FAMILIES),
    )


def _approve(run: AuditRun) -> str:
    approve = next(c for c in run.controls if c.tool == "apply_change" and c.name == "approve")
    assert approve.passed, approve.detail
    return approve.detail


def test_the_preview_field_completes_the_honest_flow_and_the_careful_server_refuses_the_token_attacks(
    catalogue: Catalogue, generation: object
) -> None:
    run = _audit(catalogue, generation, _profile())
    assert "through token" in _approve(run)
    results = {r.id: r for r in run.results}
    again = results["MCA-TOKREUSE-001"]
    assert (again.verdict, again.layer) == (Verdict.REFUSED, Layer.TOOL), again.evidence
    # The change id the preview handed out went back beside its token, not a value of the harness's.
    confirmed = [line for line in again.evidence if "confirm with the token -> apply_change" in line]
    assert confirmed, again.evidence
    assert all('apply_change({"change_id": "chg_' in line for line in confirmed), confirmed
    # Another action's token for the victim's use goes with the victim's own change id: the token is refused.
    moved = results["MCA-TOKOTHER-001"]
    assert (moved.verdict, moved.layer) == (Verdict.REFUSED, Layer.TOOL), (moved.reason, moved.evidence)
    assert not moved.effect.happened, moved.evidence
    # A token minted for a use never previewed: no change id names it, so none is sent; never a refusal.
    minted = results["MCA-TOKMINT-001"]
    assert minted.verdict is Verdict.INCONCLUSIVE, (minted.reason, minted.evidence)
    sent = [line for line in minted.evidence if line.startswith("[attack] confirm with the token")]
    assert sent, minted.evidence
    assert all('"change_id"' not in line.split(" <- ")[0] for line in sent), sent


def test_the_preview_field_lets_a_token_the_server_never_spends_confirm_its_change_again(
    catalogue: Catalogue, generation: object
) -> None:
    run = _audit(catalogue, generation, _profile("token-reuse"), "token-replay")
    _approve(run)
    results = {r.id: r for r in run.results}
    for attack in ("MCA-TOKREUSE-001", "MCA-TOKREUSE-003"):
        assert results[attack].verdict is Verdict.VULNERABLE, (attack, results[attack].evidence)


def test_a_preview_field_the_reply_does_not_hold_fails_approve_naming_the_fields_it_has(
    catalogue: Catalogue, generation: object
) -> None:
    profile = _profile()
    assert isinstance(profile.confirmation, Token)
    misspelled = {"change_id": "{preview.chnage_id}", "confirmation_token": "{token}"}
    profile = dataclasses.replace(
        profile, confirmation=dataclasses.replace(profile.confirmation, fields=misspelled)
    )
    run = run_audit(
        forked(profile),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.id == "MCA-TOKREUSE-001",
    )
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed
    assert (
        "the preview's reply has no field 'chnage_id', which into.change_id names as {preview.chnage_id} "
        "(its fields: change_id, confirmation_token, status, summary); name one of them in "
        "confirmation.token.into"
    ) in approve.detail, approve.detail
    assert run.by_id()["MCA-TOKREUSE-001"].verdict is Verdict.INCONCLUSIVE


def test_under_process_isolation_another_actions_token_goes_with_the_victims_change_id_of_its_own_world(
    catalogue: Catalogue, generation: object
) -> None:
    """Each attack in a fresh target process: a change id kept from an earlier world names nothing there.

    TOKOTHER-001 sent the victim's change id from the approve control's preview, made in another
    process: "unknown change", inconclusive (as on mcp-changeset itself). The victim is previewed in
    the attack's own world, and its change id goes with the decoy's token: the token is refused.
    """
    profile = dataclasses.replace(_profile(), isolation="process")
    run = _audit(catalogue, generation, profile, "token-cross-target")
    _approve(run)
    moved = run.by_id()["MCA-TOKOTHER-001"]
    assert (moved.verdict, moved.layer) == (Verdict.REFUSED, Layer.TOOL), (moved.reason, moved.evidence)
    assert not moved.effect.happened, moved.evidence
    previews = [line for line in moved.evidence if line.startswith("[setup] preview -> preview_label")]
    assert len(previews) == 2, moved.evidence
    (victim, victim_token), (_, decoy_token) = (
        (CHANGE_ID.findall(line)[0], TOKEN.findall(line)[0]) for line in previews
    )
    confirmed = [line for line in moved.evidence if line.startswith("[attack] confirm with the token")]
    assert len(confirmed) == 1, moved.evidence
    sent = confirmed[0].split(" <- ")[0]
    assert (CHANGE_ID.findall(sent), TOKEN.findall(sent)) == ([victim], [decoy_token]), sent
    assert victim_token not in sent


def test_a_fresh_world_forgets_the_change_ids_the_last_one_handed_out(
    catalogue: Catalogue, generation: object
) -> None:
    """What a token carries beside it comes from a preview of the world it is sent in, or from none."""
    session = AuditSession(forked(_profile()), catalogue, generation)  # type: ignore[arg-type]
    session.start([])
    try:
        outcome = session.controls("apply_change")
        assert outcome.approve_ok, outcome.results[0].detail
        token = outcome.mechanism
        assert isinstance(token, Token)
        use = session.plan("apply_change").arguments(session.values)
        # A token the target never handed out, for the use the approve control previewed: that preview's id.
        here = token.confirming(use, "confirm_never_handed_out")
        assert CHANGE_ID.fullmatch(str(here.get("change_id"))), here
        session.world.isolate()
        # In a fresh target process that preview was never made: no change id goes, never the old one.
        there = token.confirming(use, "confirm_never_handed_out")
        assert there == {"confirmation_token": "confirm_never_handed_out"}, there
    finally:
        session.close()
