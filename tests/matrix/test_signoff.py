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
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION

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


def audit(catalogue: Catalogue, families: Collection[str], **factory_args: Any) -> AuditRun:
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
