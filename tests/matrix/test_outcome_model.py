"""Verdicts from effects, and refusals learned from the target: a server that answers in ordinary results.

The outcomes reference server never raises: a refusal is `{"ok": false,
"status": "refused"}`. What happened is read from its board file; who refused,
from the refusals its own controls showed. Each case reproduces a cause seen on
a real server, and a careful variant shows the rule does not fire on it.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Collection
from pathlib import Path

from conftest import MATRIX_GENERATION, forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile

SERVER = Path(__file__).resolve().parents[2] / "targets" / "outcomes" / "server.py"
V, R, INC = Verdict.VULNERABLE, Verdict.REFUSED, Verdict.INCONCLUSIVE
FAMILIES = frozenset({"consent", "replay", "double-spend", "self-approval", "forged-state"})


def audit(catalogue: Catalogue, *options: str, families: Collection[str] = FAMILIES) -> AuditRun:
    command = shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])
    return run_audit(
        forked(Profile(command=command, call_timeout=10.0)),
        catalogue=catalogue,
        select=lambda spec: spec.family in families,
        generation=MATRIX_GENERATION,
    )


def findings(run: AuditRun) -> dict[str, Verdict]:
    return {r.id: r.verdict for r in run.results if r.verdict in (V, Verdict.WEAK)}


def test_refusals_inside_ordinary_results_are_refusals_of_the_gate_and_nothing_is_found(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue)
    assert all(c.passed for c in run.controls), run.controls
    assert findings(run) == {}
    judged = [r for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE]
    assert judged
    assert {(r.verdict, r.layer) for r in judged} <= {(R, Layer.TOOL), (R, Layer.SDK_BOUNDARY)}, [
        (r.id, r.verdict, r.reason) for r in judged
    ]
    # The refusals the harness went by are this target's own, and named in the report.
    learned = next(c for c in run.controls if c.name == "refusals")
    assert "gate refusal learned from decline" in learned.detail
    assert "other failure learned from no-such-subject" in learned.detail
    # Its log changes on every call: bookkeeping, though the board is read by rows too.
    assert any("root/audit.jsonl" in c.detail for c in run.controls if c.name == "bookkeeping")


def test_a_decline_that_acts_is_vulnerable_though_its_reply_says_refused(catalogue: Catalogue) -> None:
    run = audit(catalogue, "--flaw", "decline-acts", families={"consent"})
    found = findings(run)
    assert found == {"MCA-CONSENT-001": V, "MCA-CONSENT-002": V}, found
    reply = run.by_id()["MCA-CONSENT-001"]
    assert "the user did not approve (decline)" in "\n".join(reply.evidence)  # its reply said refused
    assert "root/board.json" in reply.reason


def test_a_replayed_approval_is_counted_by_its_effect_whatever_the_replies_say(catalogue: Catalogue) -> None:
    found = findings(audit(catalogue, "--flaw", "no-ledger", families={"replay"}))
    assert {k for k, v in found.items() if v is V} >= {"MCA-REPLAY-001", "MCA-REPLAY-002"}, found


def test_a_refusal_that_offers_an_agent_only_token_is_followed_to_the_bypass(catalogue: Catalogue) -> None:
    run = audit(catalogue, "--offer", "agent-token", families={"consent"})
    declined = run.by_id()["MCA-CONSENT-001"]
    assert declined.verdict is V, declined.reason
    assert "offered another way to confirm" in declined.reason
    assert any("followed as the agent alone" in line for line in declined.evidence)


def test_an_offered_token_path_that_still_asks_the_person_is_no_finding(catalogue: Catalogue) -> None:
    run = audit(catalogue, "--offer", "asks", families={"consent"})
    assert findings(run) == {}
    declined = run.by_id()["MCA-CONSENT-001"]
    assert (declined.verdict, declined.layer) == (R, Layer.TOOL)
    assert any("followed as the agent alone" in line for line in declined.evidence)


def test_a_refusal_of_the_world_is_inconclusive_and_quoted_never_the_gate_holding(
    catalogue: Catalogue,
) -> None:
    # Its replay meets "J1 has that status already" before any ledger looks: nothing shows the gate held.
    run = audit(catalogue, "--world-guard", families={"replay"})
    replay = run.by_id()["MCA-REPLAY-001"]
    assert replay.verdict is INC, replay.reason
    assert replay.reason.startswith("the target failed for another reason")
    assert "has that status already" in replay.reason
    # The honest flow carried its world over from one control to the next: isolated, and said why.
    assert any(c.name == "isolation" for c in run.controls)


# A client that declares no elicitation (or URL mode only) cannot show the user a form.
DOWNGRADE = frozenset({"capability-downgrade"})


def test_a_token_offered_only_to_a_client_that_cannot_be_asked_is_followed_there_to_the_bypass(
    catalogue: Catalogue,
) -> None:
    # As tracker-mcp 0.5.2: clients that can be asked are asked; to one that cannot, a refusal says
    # "dry_run, then confirm=<token>", and the agent alone can take that path.
    run = audit(catalogue, "--without-elicitation", "agent-token", families=FAMILIES | DOWNGRADE)
    assert all(c.passed for c in run.controls), run.controls
    assert findings(run) == {"MCA-DOWNGRADE-001": V, "MCA-DOWNGRADE-002": V}
    for attack in ("MCA-DOWNGRADE-001", "MCA-DOWNGRADE-002"):
        result = run.by_id()[attack]
        assert "answered with an offer of a token flow" in result.reason, result.reason
        assert "root/board.json" in result.reason
        # Taken on the client the offer was made to: the preview and the confirming call carry no question.
        assert any("confirm=" in line or "'confirm'" in line for line in result.evidence), result.evidence


def test_a_client_that_cannot_be_asked_refused_outright_is_no_finding(catalogue: Catalogue) -> None:
    run = audit(catalogue, "--without-elicitation", "refuse", families=DOWNGRADE)
    assert findings(run) == {}
    for attack in ("MCA-DOWNGRADE-001", "MCA-DOWNGRADE-002"):
        result = run.by_id()[attack]
        assert (result.verdict, result.layer) == (R, Layer.TOOL), result.reason


def test_a_fallback_the_person_still_approves_on_their_own_terminal_is_no_finding(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, "--without-elicitation", "pending", families=DOWNGRADE)
    assert findings(run) == {}
    for attack in ("MCA-DOWNGRADE-001", "MCA-DOWNGRADE-002"):
        result = run.by_id()[attack]
        assert (result.verdict, result.layer) == (R, Layer.TOOL), result.reason
        assert any("cannot be completed by the agent" in line for line in result.evidence), result.evidence
