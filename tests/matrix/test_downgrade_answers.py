"""capability-downgrade answers as a client that declared no elicitation does, in both eras.

Such a client cannot show a form: over the back channel it replies to the server's
elicitation/create with the error the SDK's own client sends, and over MRTR it sends no
second round. So the form sent anyway is `weak` (the MUST NOT, layer protocol), and only a
server that acts without the answer it cannot get is `vulnerable` (seen on mcp-confirm,
whose finding the harness's own "accept" made). Each both ways: the reference server over
MRTR, the legacy server over 2025-11-25 in two styles, careful and with each flaw.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION, REFERENCE_SERVER

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

LEGACY_SERVER = Path(__file__).resolve().parents[2] / "targets" / "legacy" / "server.py"
V, W, R = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED
ATTACKS = ("MCA-DOWNGRADE-001", "MCA-DOWNGRADE-002")
# (server, era pinned, style) for each way a careful server may be written.
SERVERS = {
    "mrtr": (REFERENCE_SERVER, None, "quoted"),
    "mrtr-terse": (REFERENCE_SERVER, None, "terse"),
    "legacy": (LEGACY_SERVER, "2025-11-25", "plain"),
    "legacy-enum-worded": (LEGACY_SERVER, "2025-11-25", "enum-worded"),
}


def downgrade(catalogue: Catalogue, server: str, *flaws: str) -> AuditRun:
    script, era, style = SERVERS[server]
    raw = {
        "command": f"py:{script}:build_server",
        "factory_args": {"flaws": list(flaws), "style": style},
        "tool": "delete_file",
        "call_timeout": 10.0,
        **({"protocol": era} if era else {}),
    }
    return run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family == "capability-downgrade",
        generation=MATRIX_GENERATION,
    )


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_a_careful_server_refuses_a_client_that_cannot_be_asked(catalogue: Catalogue, server: str) -> None:
    run = downgrade(catalogue, server)
    for attack in ATTACKS:
        result = run.by_id()[attack]
        assert result.verdict is R, (result.reason, result.evidence)
        assert not result.effect.happened


@pytest.mark.parametrize("server", sorted(SERVERS))
def test_a_form_sent_to_a_client_that_cannot_answer_it_is_weak_at_the_protocol_and_never_accepted(
    catalogue: Catalogue, server: str
) -> None:
    run = downgrade(catalogue, server, "elicits-without-capability")
    for attack in ATTACKS:
        result = run.by_id()[attack]
        assert (result.verdict, result.layer) == (W, Layer.PROTOCOL), (result.reason, result.evidence)
        assert "MUST NOT" in result.reason
        assert not result.effect.happened, result.evidence
        # The client that declared no elicitation never said yes to anything.
        assert not any('"accept"' in line for line in result.evidence), result.evidence
        if server.startswith("legacy"):
            assert any("Elicitation not supported" in line for line in result.evidence), result.evidence
        else:
            assert any("no second round was sent" in line for line in result.evidence), result.evidence


@pytest.mark.parametrize("server", ["mrtr", "legacy"])
def test_a_server_that_acts_on_no_answer_from_a_client_that_cannot_give_one_is_vulnerable(
    catalogue: Catalogue, server: str
) -> None:
    run = downgrade(catalogue, server, "no-answer-is-yes")
    # URL mode only: the legacy flaw takes a form's error as a yes, the MRTR flaw acts at once.
    for attack in ATTACKS:
        result = run.by_id()[attack]
        assert result.verdict is V, (result.reason, result.evidence)
        assert "could not answer" in result.reason
        assert result.effect.removed, result.evidence
        assert not any('"accept"' in line for line in result.evidence), result.evidence
