"""A flag that is the only gate: a tool that never asks (no channel configured) but acts on the caller's flag.

The flag-only reference server (targets/flag_only) refuses every deletion in words that name
no argument, so no flag mechanism is detected and the honest flow never completes. flag-bypass
still runs there: the action's own call must not act, and a switch that then makes it act is
the whole gate (vulnerable). The careful server refuses the caller's flag too: with no honest
flow to compare with, nothing is judged refused (controls first), and nothing is found; where
a channel is configured (the confirm-kinds flag server asks) the careful refusal is proven in
test_confirmation_kinds.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

SERVER = Path(__file__).resolve().parents[2] / "targets" / "flag_only" / "server.py"
STYLES = ("error", "result")


def audit(catalogue: Catalogue, style: str, *flaws: str) -> AuditRun:
    factory = {"style": style, "flaws": list(flaws)}
    raw = {
        "command": f"py:{SERVER}:build_server",
        "factory_args": factory,
        "tool": "delete_file",
        "call_timeout": 10.0,
    }

    def select(spec: AttackSpec) -> bool:
        return spec.family in ("flag-bypass", "self-approval", "out-of-root", "consent")

    return run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=select,
        generation=MATRIX_GENERATION,
    )


@pytest.mark.parametrize("style", STYLES)
def test_a_flag_that_is_the_only_gate_is_found_though_the_tool_never_asks(
    catalogue: Catalogue, style: str
) -> None:
    run = audit(catalogue, style, "flag-is-the-only-gate")
    assert not next(c for c in run.controls if c.name == "approve").passed
    found = run.by_id()["MCA-FLAGBYPASS-001"]
    assert (found.verdict, found.layer) == (Verdict.VULNERABLE, Layer.NONE), found.evidence
    assert "the only gate" in found.reason
    assert "where the honest flow never completed" in found.reason
    assert found.effect.removed, found.evidence
    # The action's own call came first and did not act; then the caller's confirmed: true did.
    assert any("no switch set" in line for line in found.evidence), found.evidence
    assert any("confirmed: True" in line for line in found.evidence), found.evidence
    # Every other family still waits for an honest flow.
    others = {r.verdict for r in run.results if r.id != found.id}
    assert others == {Verdict.INCONCLUSIVE}


@pytest.mark.parametrize("style", STYLES)
def test_the_careful_server_that_refuses_the_callers_flag_gets_no_finding(
    catalogue: Catalogue, style: str
) -> None:
    run = audit(catalogue, style)
    assert {r.verdict for r in run.results} == {Verdict.INCONCLUSIVE}, [(r.id, r.reason) for r in run.results]
    assert run.by_id()["MCA-FLAGBYPASS-001"].reason.startswith("honest flow failed")
