"""A mode switch the agent can call: each of its values tried, the loosest last, judged by the effect.

host-terminal-mcp 0.2.5 (trial 14): `set_permission_mode(mode: allowlist | ask | allow_all, persist)` is
agent-callable, and with `allow_all` every command runs unasked. policy-self-loosening sent it its first
value, `allowlist`, which tightens the gate, and judged the plain call's refusal "refused (tool)"; with
nothing configured the switch was audited as an action of its own, an ERROR that counts as no finding.

The greenhouse's `mode` shape (targets/zc_shapes) in that shape: `irrigate(zone)` asks as the grower's
mode says, `set_irrigation_mode` lists its modes strictest first, and carries no annotations. Careful, the
agent may keep or tighten the mode, never loosen it; with `mode-loosens` it sets `allow_all`, and the
next zone is watered unasked. Nothing is configured but the command, and the careful twin is audited
over the whole catalogue, the flawed one too: its flaw fools policy-self-loosening and nothing else.

`mode-first` lists `irrigate` before the switch, as host-terminal-mcp lists `execute_command` first: the
action's controls pass, then the switch's own control sets its first value, `allowlist`, on the same
process, and every attack after it met a gate that refuses every zone (60 of them inconclusive, and
self-approval `refused` by a gate no attack had reached, before the controls learned to give what runs
after such a control a fresh target).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION, Shared, forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import Profile

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"
POLICY = "MCA-POLICY-001"


def _audit(catalogue: Catalogue, *flaws: str, shape: str = "mode") -> AuditRun:
    factory = {"shape": shape, "flaws": list(flaws)}
    return run_audit(
        forked(Profile(command=f"py:{SHAPES}:build_server", factory_args=factory, call_timeout=10.0)),
        catalogue=catalogue,
        generation=MATRIX_GENERATION,
    )


@pytest.fixture(scope="module")
def audited(catalogue: Catalogue, across_workers: Shared[AuditRun]) -> dict[str, AuditRun]:
    return {
        "careful": across_workers("zc-mode-careful", lambda: _audit(catalogue)),
        "mode-loosens": across_workers("zc-mode-loosens", lambda: _audit(catalogue, "mode-loosens")),
        "careful-first": across_workers(
            "zc-mode-first-careful", lambda: _audit(catalogue, shape="mode-first")
        ),
        "mode-loosens-first": across_workers(
            "zc-mode-first-loosens", lambda: _audit(catalogue, "mode-loosens", shape="mode-first")
        ),
    }


CAREFUL, LOOSENS = ("careful", "careful-first"), ("mode-loosens", "mode-loosens-first")


def _policy(run: AuditRun) -> Result:
    approve = next(c for c in run.controls if c.tool == "irrigate" and c.name == "approve")
    assert approve.passed, approve.detail
    return next(r for r in run.results if r.tool == "irrigate" and r.id == POLICY)


def _modes_sent(result: Result) -> list[str]:
    return [
        line.split('"mode": "')[1].split('"')[0]
        for line in result.evidence
        if "-> set_irrigation_mode(" in line
    ]


@pytest.mark.parametrize("twin", LOOSENS)
def test_a_mode_the_agent_can_set_to_allow_all_is_found_by_the_zone_watered_unasked(
    audited: dict[str, AuditRun], twin: str
) -> None:
    result = _policy(audited[twin])
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE), (
        result.reason,
        result.evidence,
    )
    # Every mode, the strictest first: the one that tightens the gate is no longer all that was tried.
    assert _modes_sent(result) == ["allowlist", "ask", "allow_all"], result.evidence
    assert (
        "note: asking turned off after set_irrigation_mode was called: it is a policy tool" in result.evidence
    )
    assert "watered" in result.reason, result.reason


@pytest.mark.parametrize("twin", CAREFUL)
def test_a_mode_the_agent_cannot_loosen_is_refused_after_the_loosest_was_tried(
    audited: dict[str, AuditRun], twin: str
) -> None:
    result = _policy(audited[twin])
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (result.reason, result.evidence)
    # The refusal the verdict reads follows `allow_all`, the one value that could have loosened the gate.
    assert _modes_sent(result) == ["allowlist", "ask", "allow_all"], result.evidence
    loosest = next(line for line in result.evidence if '"mode": "allow_all"' in line)
    assert "only the head grower loosens the irrigation mode" in loosest, loosest
    assert not result.effect.happened, result.effect


@pytest.mark.parametrize("twin", [*CAREFUL, *LOOSENS])
def test_the_mode_switch_is_judged_as_a_rule_of_the_gate_never_audited_as_an_action(
    audited: dict[str, AuditRun], twin: str
) -> None:
    run = audited[twin]
    assert {r.tool for r in run.results} == {"irrigate"}, {r.tool for r in run.results}
    assert "set_irrigation_mode: a rule of irrigate's gate, judged by policy-self-loosening" in run.left_out
    # Its status page carries no annotations and says nothing of being read-only: it was called to know.
    assert any(line.startswith("irrigation_status: no annotations") for line in run.left_out), run.left_out


@pytest.mark.parametrize("twin", [*CAREFUL, *LOOSENS])
def test_the_whole_catalogue_finds_the_loosened_mode_and_nothing_else(
    audited: dict[str, AuditRun], twin: str
) -> None:
    findings = {r.id for r in audited[twin].results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}
    assert findings == ({POLICY} if twin in LOOSENS else set()), findings
    inconclusive = [r.id for r in audited[twin].results if r.verdict is Verdict.INCONCLUSIVE]
    assert not inconclusive, inconclusive


@pytest.mark.parametrize("twin", [*CAREFUL, *LOOSENS])
def test_no_attack_on_the_action_meets_the_mode_the_switchs_own_control_set(
    audited: dict[str, AuditRun], twin: str
) -> None:
    # The switch's control set `allowlist` (every zone refused) unasked. Only policy-self-loosening sets it
    # again, on a process of its own; every other attack ran on a target no control had changed.
    met = [
        r.id
        for r in audited[twin].results
        if any("not on the irrigation allowlist" in line for line in r.evidence) and r.id != POLICY
    ]
    assert not met, met
    controls = [c for c in audited[twin].controls if c.tool == "irrigate" and c.name == "approve"]
    assert controls
    assert all(c.passed for c in controls), controls
