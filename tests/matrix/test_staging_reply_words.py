"""A staging reply that says "not done yet" in a refusal's field is a staging reply everywhere, both ways.

rei-automator-mcp 0.2.0a3 stages with `{"action_id": ..., "approved": false}` and cmd-line-mcp 0.6.1 with
`{"success": false, "requires_approval": true, "session_id": ..., "error": "... requires approval"}`. The
controls read each as staged (an id handed out), but prompt-forging read the preview of a plain name as
refused, so every PROMPT attack stayed inconclusive: "the preview of a plain value was refused ...
approved: false". The confirm-kinds reference server stages in each of those words (`pending_reply`),
in process; the person reads the request on their own channel (`approve_cli.py ID show`).
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import PERSON_STEPS_GENERATION
from test_confirmation_kinds import HUMAN_CHANNEL_SHOWN, KINDS_SERVER

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

V, R, NA = Verdict.VULNERABLE, Verdict.REFUSED, Verdict.NOT_APPLICABLE
# The real servers' words: rei-automator-mcp's, and cmd-line-mcp's.
STYLES = ("approved-false", "requires-approval")


def _audit(catalogue: Catalogue, style: str, flaws: tuple[str, ...], ids: frozenset[str] | None) -> AuditRun:
    factory: dict[str, Any] = {"mechanism": "pending", "pending_reply": style, "flaws": list(flaws)}
    raw = {
        "command": f"py:{KINDS_SERVER}:build_server",
        "factory_args": factory,
        "tool": "delete_file",
        "call_timeout": 10.0,
        **HUMAN_CHANNEL_SHOWN,
    }

    def select(spec: AttackSpec) -> bool:
        return spec.family == "prompt-forging" if ids is None else spec.id in ids

    return run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=select,
        generation=PERSON_STEPS_GENERATION,
    )


@pytest.mark.parametrize("style", STYLES)
def test_a_careful_preview_in_not_yet_approved_words_is_judged_by_every_prompt_attack(
    catalogue: Catalogue, style: str
) -> None:
    run = _audit(catalogue, style, (), None)
    assert all(c.passed for c in run.controls), [(c.name, c.detail) for c in run.controls]
    results = run.by_id()
    assert results, "no prompt-forging attack ran"
    for attack_id, result in results.items():
        # Form checks have no form over a flow: not applicable, saying so. Every other one is judged.
        assert result.verdict in (R, NA), (attack_id, result.verdict, result.reason)
        assert "preview of a plain value was refused" not in result.reason
    assert sum(r.verdict is R for r in results.values()) >= 10, {k: r.verdict for k, r in results.items()}


@pytest.mark.parametrize("style", STYLES)
def test_a_hostile_name_written_raw_into_a_not_yet_approved_reply_is_found(
    catalogue: Catalogue, style: str
) -> None:
    run = _audit(catalogue, style, ("raw-name-in-preview",), frozenset({"MCA-PROMPT-002"}))
    result = run.by_id()["MCA-PROMPT-002"]
    assert result.verdict is V, (result.reason, result.evidence)
    assert "bidi control" in result.reason
