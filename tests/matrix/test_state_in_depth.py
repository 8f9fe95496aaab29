"""Request state in depth, proven both ways through real processes of the reference server.

Replicas on one root (real stdio subprocesses sharing a real SQLite file or a
real redis-server), races against a real ledger, and a real wait past a real
lifetime. Every cross-replica and expiry attack is `vulnerable` on a server
with exactly the flaw it is for, and `refused` by the named layer on a careful one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun
from mcp_confirm_audit.models import FAIL_CLOSED, Layer, Verdict

AuditFn = Callable[..., AuditRun]
V = Verdict.VULNERABLE
# A race the harness wins or loses: either way the flaw is found, with evidence.
V_OR_W = frozenset({V, Verdict.WEAK})
REPLICA_ATTACKS = [f"MCA-REPLICA-00{n}" for n in range(1, 6)]
# Sequential across replicas: certain. All replicas at once: a race, counted by its effects only.
REPLICAS_FOOLED = {**dict.fromkeys(REPLICA_ATTACKS[:4], V), "MCA-REPLICA-005": V_OR_W}
# A ledger per process still spends on each replica's first try: in the race, a replica that loses
# the file to the other before it acts shows one effect, so only the sequential attacks are certain.
SEQUENTIAL_FOOLED = dict.fromkeys(REPLICA_ATTACKS[:4], V)
KEY_ENV = "REFERENCE_STATE_KEY"
# Two replicas behind one balancer: the same key, given by the harness to both.
SHARED_KEYS = {"replicas": 2, "shared_key_env": KEY_ENV}
# How the reference server's confirmation lifetime is shortened.
SHORT_LIFETIME = {"ttl_flag": "--ttl-seconds {ttl}", "ttl": 1.0}
SQLITE = ["--ledger", "sqlite:{root}/../ledger.db"]  # beside the root, shared by every replica

# flaw -> (the options it runs with, its profile settings, the families it may
# fool, the attacks that must catch it). The replicas share keys, as a real
# deployment must: what is then left to stop a replay is the ledger.
DEEP_FLAWS: dict[
    str, tuple[list[str], dict[str, object], tuple[str, ...], dict[str, Verdict | frozenset[Verdict]]]
] = {
    "no-ledger": (
        ["--shared-key-env", KEY_ENV],
        SHARED_KEYS,
        ("replay", "double-spend", "cross-replica"),
        REPLICAS_FOOLED,
    ),
    "per-process-ledger": (
        ["--shared-key-env", KEY_ENV, *SQLITE],
        SHARED_KEYS,
        ("cross-replica",),
        SEQUENTIAL_FOOLED,
    ),
    "no-expiry": ([], SHORT_LIFETIME, ("expiry",), {"MCA-EXPIRY-001": V}),
}


def test_every_cross_replica_and_expiry_attack_is_caught_by_some_flaw(catalogue: Catalogue) -> None:
    caught = {attack_id for *_, expected in DEEP_FLAWS.values() for attack_id in expected}
    deep = {a.id for a in catalogue.active if a.family in ("cross-replica", "expiry")}
    assert deep - caught == set()


# The flaw audited over the whole catalogue here: per-process-ledger, on two replicas sharing keys
# ("fools no other family" for this shape; test_transports.py audits the careful server whole with two
# replicas and a short lifetime). no-ledger's whole-catalogue audit is the detection matrix's, and
# no-expiry only lengthens what expiry judges: each runs the families it may fool.
WHOLE = frozenset({"per-process-ledger"})


@pytest.mark.parametrize("flaw", sorted(DEEP_FLAWS))
def test_each_deep_flaw_is_caught_and_fools_no_unrelated_family(audit_reference: AuditFn, flaw: str) -> None:
    options, settings, families, expected = DEEP_FLAWS[flaw]
    only = None if flaw in WHOLE else families
    run = audit_reference("--flaw", flaw, *options, families=only, **settings)
    assert next(c for c in run.controls if c.name == "approve").passed
    by_id = run.by_id()
    for attack_id, verdict in expected.items():
        allowed = verdict if isinstance(verdict, frozenset) else {verdict}
        assert by_id[attack_id].verdict in allowed, by_id[attack_id].evidence
    fooled = [r for r in run.results if r.family not in families and r.verdict in (V, Verdict.WEAK)]
    assert fooled == [], [(r.id, r.verdict, r.reason) for r in fooled]


@pytest.mark.parametrize("ledger", ["sqlite", "redis"])
def test_replicas_sharing_keys_and_a_ledger_honour_an_approval_once_on_any_replica(
    audit_reference: AuditFn, request: pytest.FixtureRequest, ledger: str
) -> None:
    spec = SQLITE if ledger == "sqlite" else ["--ledger", request.getfixturevalue("redis_url")]
    run = audit_reference(
        "--shared-key-env",
        KEY_ENV,
        *spec,
        families=["cross-replica", "double-spend", "forged-state"],
        **SHARED_KEYS,
    )
    by_id = run.by_id()
    # The honest case: asked on one replica, answered on the other, acted on exactly once.
    honest = by_id["MCA-REPLICA-001"]
    assert (honest.verdict, honest.layer) == (Verdict.REFUSED, Layer.TOOL), honest.evidence
    assert "took effect once" in honest.reason
    for attack_id in [*REPLICA_ATTACKS, "MCA-DSPEND-001", "MCA-DSPEND-002"]:
        result = by_id[attack_id]
        assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (attack_id, result.evidence)
    # With shared keys another process's state is valid by design: not judged as a forgery.
    assert by_id["MCA-FORGE-006"].verdict is Verdict.NOT_APPLICABLE
    assert "shared_key_env" in by_id["MCA-FORGE-006"].reason


@pytest.mark.parametrize(
    ("options", "settings", "layer"),
    [
        # One key, but each replica remembers only the approvals it issued itself.
        (["--shared-key-env", KEY_ENV], SHARED_KEYS, Layer.TOOL),
        # Each replica with a key of its own: the other's states do not even unseal.
        ([], {"replicas": 2}, Layer.SDK_BOUNDARY),
    ],
    ids=["shared-keys-memory-ledgers", "keys-of-their-own"],
)
def test_replicas_that_cannot_redeem_each_others_approvals_fail_closed_and_say_so(
    audit_reference: AuditFn, options: list[str], settings: dict[str, object], layer: Layer
) -> None:
    run = audit_reference(*options, families=["cross-replica"], **settings)
    honest = run.by_id()["MCA-REPLICA-001"]
    assert (honest.verdict, honest.layer) == (Verdict.REFUSED, layer), honest.evidence
    assert honest.reason.startswith("fail-closed")
    assert FAIL_CLOSED in honest.reason
    assert {r.verdict for r in run.results} == {Verdict.REFUSED}


@pytest.mark.parametrize(
    ("options", "layer"),
    [([], Layer.SDK_BOUNDARY), (["--state", "signed"], Layer.TOOL)],
    ids=["sealed-by-the-sdk", "signed-by-the-server"],
)
def test_a_late_answer_is_refused_by_whichever_layer_keeps_the_lifetime(
    audit_reference: AuditFn, options: list[str], layer: Layer
) -> None:
    run = audit_reference(*options, families=["expiry"], **SHORT_LIFETIME)
    late = run.by_id()["MCA-EXPIRY-001"]
    assert (late.verdict, late.layer) == (Verdict.REFUSED, layer), late.evidence


def test_a_control_answered_past_the_lifetime_on_a_loaded_machine_is_tried_again_not_judged(
    audit_reference: AuditFn,
) -> None:
    # The short-lived process's first question reaches the harness 1.5 s into a 1 s lifetime, as on a
    # machine too loaded to answer in time: that control proves nothing, and the next one does.
    run = audit_reference("--late-first-question", "1.5", families=["expiry"], **SHORT_LIFETIME)
    late = run.by_id()["MCA-EXPIRY-001"]
    assert (late.verdict, late.layer) == (Verdict.REFUSED, Layer.SDK_BOUNDARY), late.evidence
    assert any("past the 1s lifetime: proves nothing, tried again" in line for line in late.evidence)
