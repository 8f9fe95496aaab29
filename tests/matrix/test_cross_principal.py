"""One identity's confirmation used by another, proven both ways over real HTTP.

The reference server requires a bearer token (the SDK's own `TokenVerifier`
and bearer middleware), so its `RequestStateBoundary` binds every state to the
principal the token proves: the careful server refuses each cross-principal
attack at `sdk-boundary`. Each flaw removes one part of that, and is caught.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from identities import BEARER, as_alice

from mcp_confirm_audit.engine.session import AuditRun
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.headers import Header

AuditFn = Callable[..., AuditRun]
V, R = Verdict.VULNERABLE, Verdict.REFUSED
FAMILY = ["cross-principal"]
REDEEM, SPENT, DECLINED, CLAIM = (f"MCA-XPRINCIPAL-00{n}" for n in range(1, 5))


def audit_as_alice(audit_reference: AuditFn, *options: str, with_mallory: bool = True) -> AuditRun:
    run = audit_reference(*BEARER, *options, families=FAMILY, **as_alice(with_mallory=with_mallory))
    # The honest flow worked with alice's token: every verdict below is earned.
    assert all(c.passed for c in run.controls), run.controls
    return run


def verdicts(run: AuditRun) -> dict[str, tuple[Verdict, Layer | None]]:
    return {r.id: (r.verdict, r.layer) for r in run.results}


def test_the_careful_server_refuses_another_identity_at_the_sdk_boundary(audit_reference: AuditFn) -> None:
    run = audit_as_alice(audit_reference)
    assert verdicts(run) == dict.fromkeys((REDEEM, SPENT, DECLINED, CLAIM), (R, Layer.SDK_BOUNDARY))


def test_with_no_ledger_the_principal_binding_alone_refuses_mallory_replaying_alices_approval(
    audit_reference: AuditFn,
) -> None:
    # Alice could replay her own approval on this server (the replay family says so);
    # mallory cannot, and only the boundary's principal binding is left to say no.
    run = audit_as_alice(audit_reference, "--flaw", "no-ledger")
    assert verdicts(run)[SPENT] == (R, Layer.SDK_BOUNDARY)
    assert verdicts(run)[DECLINED] == (R, Layer.SDK_BOUNDARY)


def test_a_careful_server_that_signs_its_own_state_refuses_another_identity_in_the_tool(
    audit_reference: AuditFn,
) -> None:
    run = audit_as_alice(audit_reference, "--state", "signed")
    assert set(verdicts(run).values()) == {(R, Layer.TOOL)}
    assert all("asked of another user" in r.reason for r in run.results)


@pytest.mark.parametrize(
    ("flaws", "expected"),
    [
        # Its own state names no principal: whoever holds it redeems it.
        (("principal-unbound-state",), {REDEEM: V, CLAIM: V, SPENT: R, DECLINED: R}),
        # ... and with no single-use record, an approval alice spent or declined too.
        (("principal-unbound-state", "no-ledger"), dict.fromkeys((REDEEM, SPENT, DECLINED, CLAIM), V)),
        # The boundary binds the principal the X-MCP-User header claims: claiming alice is enough.
        (("trusts-identity-header",), {REDEEM: R, SPENT: R, DECLINED: R, CLAIM: V}),
    ],
    ids=lambda value: "+".join(value) if isinstance(value, tuple) else "",
)
def test_each_flawed_variant_lets_another_identity_use_alices_confirmation(
    audit_reference: AuditFn, flaws: tuple[str, ...], expected: dict[str, Verdict]
) -> None:
    run = audit_as_alice(audit_reference, *(word for flaw in flaws for word in ("--flaw", flaw)))
    assert {r.id: r.verdict for r in run.results} == expected, [(r.id, r.reason) for r in run.results]
    for result in run.results:
        if result.verdict is V:
            # The file alice was asked about is gone: seen on disk, not read from a message.
            assert any(path.endswith("victim.txt") for path in result.effect.removed), result.evidence


def test_without_principals_the_family_is_not_applicable_and_says_how_to_enable_it(
    audit_reference: AuditFn,
) -> None:
    run = audit_as_alice(audit_reference, with_mallory=False)
    assert {r.verdict for r in run.results} == {Verdict.NOT_APPLICABLE}
    assert all("principals:" in r.reason for r in run.results), [r.reason for r in run.results]


def test_a_principal_whose_token_the_target_refuses_makes_the_family_inconclusive_never_refused(
    audit_reference: AuditFn,
) -> None:
    settings = as_alice()
    settings["principals"] = {"mallory": (Header("Authorization", "Bearer not-a-token-it-knows"),)}
    run = audit_reference(*BEARER, families=FAMILY, **settings)
    judged = [r for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE]
    assert {r.verdict for r in judged} == {Verdict.INCONCLUSIVE}
    assert all(
        "the target refused the harness's credentials (HTTP 401, WWW-Authenticate: Bearer): "
        "set principals: mallory: headers: in the profile" in r.reason
        for r in judged
    ), [r.reason for r in judged]
