"""lapsed-request, proven both ways: a pending request executed after its lifetime must not act.

The flawed order desk (targets/orders/server.py `--flaw lapse-approves`) carries out a staged
cancellation whose lifetime passed, whether the person declined it or never answered: caught in
both modes. Two careful servers of other styles refuse it: the careful desk, whose staged request
waits for the person's decision however long it takes, and the webhook server
(targets/elsewhere/server.py), whose request expires and is then refused; the webhook gives the
person no way to decline, so that mode is not applicable there.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION, forked
from deadline import deadline
from test_confirmation_kinds import HUMAN_CHANNEL

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import load_profile, profile_from_mapping, resolve_profile

TARGETS = Path(__file__).resolve().parents[2] / "targets"
DESK = TARGETS / "orders" / "server.py"
ELSEWHERE = TARGETS / "elsewhere" / "server.py"
UNANSWERED, DECLINED = "MCA-LAPSE-001", "MCA-LAPSE-002"


def _lapsed_only(spec: AttackSpec) -> bool:
    return spec.family == "lapsed-request"


def desk(
    catalogue: Catalogue,
    *flaws: str,
    style: str = "json",
    select: Callable[[AttackSpec], bool] = _lapsed_only,
    ttl: float = 1.0,
) -> AuditRun:
    """The order desk's pending flow in process, its lifetime shortened through the factory's `ttl`."""
    factory = {"mechanism": "pending", "style": style, "flaws": list(flaws)}
    target = {
        "command": f"py:{DESK}:build_server",
        "factory_args": factory,
        **HUMAN_CHANNEL,
        "ttl_flag": "ttl={ttl}",
        "ttl": ttl,
    }
    profile = profile_from_mapping({**target, "tool": "cancel_order", "call_timeout": 10.0}, source="test")
    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def webhook(catalogue: Catalogue) -> AuditRun:
    """The careful webhook server over stdio: its requests expire after `ttl` (3 s in its profile)."""
    profile = load_profile(TARGETS / "elsewhere-webhook.yaml")
    words = [sys.executable, str(ELSEWHERE), "--root", "{root}", "--channel", "webhook"]
    words += ["--webhook", "{sink}/hook"]
    profile = forked(resolve_profile(replace(profile), shlex.join(words), None))
    return run_audit(profile, catalogue=catalogue, select=_lapsed_only, generation=MATRIX_GENERATION)


def _judged(run: AuditRun) -> dict[str, tuple[Verdict, Layer | None, str]]:
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    return {r.id: (r.verdict, r.layer, r.reason) for r in run.results}


def test_a_desk_that_fails_open_at_the_lapse_is_caught_declined_or_unanswered(catalogue: Catalogue) -> None:
    judged = _judged(desk(catalogue, "lapse-approves"))
    for attack in (UNANSWERED, DECLINED):
        verdict, layer, reason = judged[attack]
        assert (verdict, layer) == (Verdict.VULNERABLE, Layer.NONE), (attack, reason)
        assert "tool:list_cancellations" in reason, reason


def test_the_careful_desk_refuses_a_lapsed_request(catalogue: Catalogue) -> None:
    # One display style: --style changes how the reference reads, never the pending flow's lifetime; the
    # careful server of another style is the webhook below.
    judged = _judged(desk(catalogue))
    assert judged[UNANSWERED][:2] == (Verdict.REFUSED, Layer.TOOL), judged[UNANSWERED]
    assert "awaiting the human's approval" in judged[UNANSWERED][2]
    assert judged[DECLINED][:2] == (Verdict.REFUSED, Layer.TOOL), judged[DECLINED]
    assert "the human declined this action" in judged[DECLINED][2]


def test_the_careful_webhook_refuses_a_request_past_its_lifetime(catalogue: Catalogue) -> None:
    run = webhook(catalogue)
    judged = _judged(run)
    assert judged[UNANSWERED][:2] == (Verdict.REFUSED, Layer.TOOL), judged[UNANSWERED]
    # Its refusal is a bare exception (the SDK hides why); the evidence says when it was sent.
    evidence = run.by_id()[UNANSWERED].evidence
    assert any("executed 4.5s after it was staged, past a lifetime of 3s" in line for line in evidence), (
        evidence
    )
    # The person has no way to decline a webhook's request: nothing to judge, and said so.
    assert judged[DECLINED][0] is Verdict.NOT_APPLICABLE, judged[DECLINED]
    assert "no way to decline" in judged[DECLINED][2]


# The person's approval redeemed after the request's lifetime (approval-expiry, MCA-OOBLATE-001): the
# careful desk refuses a stale approval; with approval-outlives-ttl it cancels the order all the same.
@pytest.mark.parametrize(
    ("flaws", "verdict"),
    [((), Verdict.REFUSED), (("approval-outlives-ttl",), Verdict.VULNERABLE)],
    ids=["careful", "approval-outlives-ttl"],
)
def test_an_approval_redeemed_after_the_requests_lifetime_never_acts_on_the_careful_desk(
    catalogue: Catalogue, flaws: tuple[str, ...], verdict: Verdict
) -> None:
    # The family's own control stages, has the person approve (a process of its own) and redeems at once,
    # inside the lifetime: one long enough for that on a loaded machine (the suite's deadline scale).
    lifetime = deadline(2.0)
    run = desk(catalogue, *flaws, select=lambda spec: spec.id == "MCA-OOBLATE-001", ttl=lifetime)
    result = _judged(run)["MCA-OOBLATE-001"]
    assert result[0] is verdict, result
    if verdict is Verdict.REFUSED:
        assert result[1] is Layer.TOOL, result
        assert f"lifetime ({lifetime:g}s) passed" in result[2], result
    else:
        assert "tool:list_cancellations" in result[2], result
