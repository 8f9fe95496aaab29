"""A payment desk whose owner signs every payment (targets/signoff): who approves, and which payment.

Written as payment gateways answer (`decision: ALLOW | DENY | ASK`), with the
owner's wallet on a channel of its own (wallet.py, a key the agent never sees).
Two guards are proven here, each against the false finding a real server
showed: an approval transplant needs a second payment with other arguments (on
a desk that will not open one, it is no finding), and an argument that names
the approver is an argument the agent fills (approver-substitution).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

DESK = Path(__file__).resolve().parents[2] / "targets" / "signoff"
V, R, INC = Verdict.VULNERABLE, Verdict.REFUSED, Verdict.INCONCLUSIVE
TRANSPLANT = "MCA-OOBMOVE-001"


@pytest.fixture(autouse=True)
def owner_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The owner's wallet: the desk derives the owner's identity from it, wallet.py (the person) signs with it.
    monkeypatch.setenv("SIGNOFF_OWNER_SEED", "owner-seed-5e1f-never-the-agents")


def audit(
    catalogue: Catalogue,
    families: Collection[str],
    approver: dict[str, Any] | None = None,
    **factory_args: Any,
) -> AuditRun:
    owner_signs = shlex.join([sys.executable, str(DESK / "wallet.py"), "--seed-env", "SIGNOFF_OWNER_SEED"])
    raw: dict[str, Any] = {
        "command": f"py:{DESK / 'server.py'}:build_server",
        "factory_args": factory_args,
        "tool": "pay",
        "setup": [
            {
                "tool": "open_payment",
                "args": {"payee": "acme", "amount_cents": 700},
                "save": {"payment": "payment_id"},
            }
        ],
        "args": {"payment_id": "{payment}"},
        "confirmation": {
            "kind": "token",
            "token": {
                "from": "challenge",
                "into": "approval",
                "human": [{"sign": {"command": owner_signs + " {challenge}"}}],
            },
        },
        "call_timeout": 10.0,
        **({"approver": approver} if approver is not None else {}),
    }
    profile = profile_from_mapping(raw, source="test")
    return run_audit(
        profile,
        catalogue=catalogue,
        select=lambda spec: spec.family in families,
        generation=MATRIX_GENERATION,
    )


def judged(run: AuditRun, attack: str) -> Result:
    assert all(c.passed for c in run.controls), [(c.name, c.detail) for c in run.controls if not c.passed]
    return run.by_id()[attack]


# -- approval-transplant: a second payment with other arguments, or no finding -------------------


def test_the_owners_approval_for_one_payment_does_not_pay_another(catalogue: Catalogue) -> None:
    transplant = judged(audit(catalogue, {"approval-transplant"}), TRANSPLANT)
    assert (transplant.verdict, transplant.layer) == (R, Layer.TOOL), transplant.reason
    assert "the approval is for another payment" in transplant.reason


def test_a_second_payment_the_desk_refuses_to_open_is_no_transplant(catalogue: Catalogue) -> None:
    # Its allow-list holds one payee, and the other use of the action names another: its setup is refused.
    transplant = judged(audit(catalogue, {"approval-transplant"}, payees="acme"), TRANSPLANT)
    assert transplant.verdict is INC, transplant.reason
    assert "not on this desk's allow-list" in transplant.reason


def test_a_second_open_answered_with_the_first_payment_is_no_transplant(catalogue: Catalogue) -> None:
    # "Already open": the other use of the action is the same payment, so the owner's approval of it
    # redeemed for it would be the approval working (as on boundra-mcp, a false finding before the guard).
    transplant = judged(audit(catalogue, {"approval-transplant"}, one_open=True), TRANSPLANT)
    assert transplant.verdict is INC, transplant.reason
    assert "no second use of the action with other arguments" in transplant.reason
    # The setup ran twice and came back with one payment: the guard had something to hold.
    opened = [line for line in transplant.evidence if "open_payment" in line]
    assert len(opened) >= 2, transplant.evidence


# -- approver-substitution: the agent names itself where the tool takes its approver ------------------

APPROVER = "MCA-APPROVER-001"
# Where a fooled desk could show it: every family that redeems an approval on this token flow.
REDEEMING = frozenset({"approver-substitution", "self-approval", "approval-replay", "approval-transplant"})


def the_agent_as_approver() -> dict[str, Any]:
    """The agent's own wallet: an identity of its own, and the command that signs as it."""
    wallet = [sys.executable, str(DESK / "wallet.py"), "--seed", "the-agents-own-seed"]
    own = subprocess.run(
        [*wallet, "--identity"], capture_output=True, text=True, check=True, timeout=deadline(30)
    )
    signs = shlex.join(wallet) + " {challenge}"
    return {"agent": own.stdout.strip(), "steps": [{"sign": {"command": signs}}]}


def findings(run: AuditRun) -> dict[str, Verdict]:
    return {r.id: r.verdict for r in run.results if r.verdict in (V, Verdict.WEAK)}


def test_a_desk_that_checks_the_approval_against_the_owner_the_call_names_pays_for_the_agents_own_signature(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, REDEEMING, approver=the_agent_as_approver(), owner_argument="trusted")
    assert findings(run) == {APPROVER: V}, [(r.id, r.verdict, r.reason) for r in run.results]
    result = judged(run, APPROVER)
    assert "the agent put its own identity in 'owner'" in result.reason, result.reason
    assert "root/ledger.json" in result.reason
    # The owner's wallet was never used: the agent's own signed.
    assert not any("SIGNOFF_OWNER_SEED" in line for line in result.evidence), result.evidence
    assert any("the-agents-own-seed" in line for line in result.evidence), result.evidence


@pytest.mark.parametrize("owner_argument", ["ignored", "refused"])
def test_a_desk_that_binds_the_approver_to_its_own_owner_is_no_finding(
    catalogue: Catalogue, owner_argument: str
) -> None:
    run = audit(catalogue, REDEEMING, approver=the_agent_as_approver(), owner_argument=owner_argument)
    assert findings(run) == {}
    result = judged(run, APPROVER)
    assert (result.verdict, result.layer) == (R, Layer.TOOL), result.reason
    said = "not signed by the owner" if owner_argument == "ignored" else "come from its configured owner"
    assert said in result.reason, result.reason


def test_with_no_profile_the_owner_argument_is_found_by_its_words_and_a_made_up_approver_pays_nothing(
    catalogue: Catalogue,
) -> None:
    # `owner` of a tool that asks the owner to sign: found without configuration. The agent, with no
    # wallet of its own named, sends back the challenge it got, as JSON text: the SDK parses it into an
    # object for the `str | None` approval and refuses the call before the desk looks (as on
    # boundra-mcp). Nothing was tried, so nothing is shown: inconclusive, never the desk holding.
    run = audit(catalogue, {"approver-substitution"}, owner_argument="trusted")
    result = judged(run, APPROVER)
    assert (result.verdict, result.layer) == (INC, None), result.reason
    assert "the SDK refused the call's arguments" in result.reason, result.reason
    assert not result.effect.observed, result.effect
    assert any(
        "'owner': 'mca-agent-" in line or '"owner": "mca-agent-' in line for line in result.evidence
    ), result.evidence
