"""A preview that hands out a change id with its token, both taken by the confirming call (mcp-changeset's shape).

`preview_label(bed, label)` answers `{change_id, confirmation_token}`, and `apply_change(change_id,
confirmation_token)` applies exactly the staged change. Nothing but that preview names the change id, so
zero configuration, which fills an argument it knows nothing about with its own value, sent
`apply_change({"change_id": "mcp-confirm-audit", ...})`: "unknown change", the approve control failed
and every attack was inconclusive (found on the PyPI package by a newcomer). The confirming call of the
use the preview was for now carries the preview's `change_id` back (a token not its own, the last
preview of that use's); a use never previewed carries nothing, so the attacks that move a token to
another action never turn into the honest confirmation of the first.
"""

from __future__ import annotations

from pathlib import Path

from conftest import forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"


def _audit(catalogue: Catalogue, generation: object, *flaws: str) -> AuditRun:
    factory_args = {"shape": "changeset", "flaws": list(flaws)}
    profile = forked(
        Profile(command=f"py:{SHAPES}:build_server", factory_args=factory_args, call_timeout=10.0)
    )
    return run_audit(
        profile,
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.family in ("token-replay", "token-cross-target", "token-forgery"),
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
    # The token of one change presented for the victim's use: the victim's own preview's change id goes
    # with it, and the server refuses a token that is not that change's. Nothing is applied in its name.
    moved = results["MCA-TOKOTHER-001"]
    assert (moved.verdict, moved.layer) == (Verdict.REFUSED, Layer.TOOL), (moved.reason, moved.evidence)
    assert not moved.effect.happened, moved.evidence
    # A token minted for a use never previewed: no change id names that use, so the call is about the
    # harness's own value; never a refusal.
    minted = results["MCA-TOKMINT-001"]
    assert minted.verdict is Verdict.INCONCLUSIVE, (minted.reason, minted.evidence)


def test_a_token_the_server_never_spends_confirms_its_change_again(
    catalogue: Catalogue, generation: object
) -> None:
    run = _audit(catalogue, generation, "token-reuse")
    again = {r.id: r for r in run.results}["MCA-TOKREUSE-001"]
    assert again.verdict is Verdict.VULNERABLE, again.evidence
