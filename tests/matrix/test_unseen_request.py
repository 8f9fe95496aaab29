"""What the person reads before approving on their own channel: only what their steps show them.

A memory vault stages what the agent saves and a person approves it with their own command
(`imv approve ID`); the staging call's reply, JSON to the agent, echoes the agent's text. That reply
is not what the person reads: with no step that shows them the request (`shows: true`),
prompt-forging has no question to judge, and says so, where it once judged the agent's reply and
found six false "line break reached the question". With the person's own view declared (`imv show
ID`, here `approve_cli.py ID show`) and printing the text raw, the same server is caught. A flow the
person says yes to through the agent (a pending id the agent's own approve tool takes) keeps the
preview as the question: the agent relays it, as a client shows an MRTR question.

The confirm-kinds reference server (targets/confirm_kinds) in process, flaw `raw-name-in-preview`:
its staging reply and the person's view both write the name into a sentence as it is.
"""

from __future__ import annotations

import pytest
from conftest import MATRIX_GENERATION
from test_confirmation_kinds import HUMAN_CHANNEL, HUMAN_CHANNEL_SHOWN, KINDS_SERVER

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

V, W, R, NA = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED, Verdict.NOT_APPLICABLE
# The pending id approved by the agent's own approve tool (the person says yes to the agent).
AGENT_APPROVES = {
    "confirmation": {
        "kind": "pending",
        "pending": {
            "id_from": "pending_id",
            "approve": {"tool": "approve", "args": {"pending_id": "{id}"}},
            "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
        },
    }
}


def audit(
    catalogue: Catalogue, settings: dict[str, object], *flaws: str, only: str | None = None
) -> AuditRun:
    """prompt-forging (or the attack `only`) on delete_file, staged by the pending server."""
    factory = {"mechanism": "pending", "flaws": list(flaws)}
    raw = {
        "command": f"py:{KINDS_SERVER}:build_server",
        "factory_args": factory,
        "tool": "delete_file",
        "call_timeout": 10.0,
        **settings,
    }
    profile = profile_from_mapping(raw, source="test")

    def select(spec: AttackSpec) -> bool:
        return spec.id == only if only else spec.family == "prompt-forging"

    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def test_the_reply_to_the_agent_is_not_the_question_when_nothing_shows_the_person_the_request(
    catalogue: Catalogue,
) -> None:
    # The staging reply echoes every hostile name raw; the person runs only their approve command.
    run = audit(catalogue, HUMAN_CHANNEL, "raw-name-in-preview")
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    assert run.results
    for result in run.results:
        assert result.verdict is NA, (result.id, result.verdict, result.reason)
        if result.id in ("MCA-PROMPT-010", "MCA-PROMPT-011"):
            continue  # a flow shows text, not a form: said before anything else
        assert "nothing shows the person the request" in result.reason, result.reason
        # The reason says what to declare.
        assert "shows: true" in result.reason, result.reason


def test_the_persons_own_view_that_prints_the_name_raw_is_caught(catalogue: Catalogue) -> None:
    run = audit(catalogue, HUMAN_CHANNEL_SHOWN, "raw-name-in-preview", only="MCA-PROMPT-001")
    result = run.by_id()["MCA-PROMPT-001"]
    assert result.verdict is V, (result.reason, result.evidence)
    # What was judged is what the person's show command printed, on their own channel.
    assert any("on the human's channel" in line and "show" in line for line in result.evidence), (
        result.evidence
    )


def test_the_careful_persons_view_is_judged_and_refused(catalogue: Catalogue) -> None:
    run = audit(catalogue, HUMAN_CHANNEL_SHOWN, only="MCA-PROMPT-001")
    result = run.by_id()["MCA-PROMPT-001"]
    assert result.verdict is R, (result.reason, result.evidence)


@pytest.mark.parametrize(("flaws", "verdict"), [((), R), (("raw-name-in-preview",), V)])
def test_a_pending_id_the_agent_approves_keeps_the_preview_as_the_question(
    catalogue: Catalogue, flaws: tuple[str, ...], verdict: Verdict
) -> None:
    # The person says yes to the agent, which relays the staging reply and calls approve itself.
    run = audit(catalogue, AGENT_APPROVES, "agent-approval", *flaws, only="MCA-PROMPT-001")
    result = run.by_id()["MCA-PROMPT-001"]
    assert result.verdict is verdict, (result.reason, result.evidence)
