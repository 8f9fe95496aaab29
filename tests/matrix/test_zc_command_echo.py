"""A pending flow whose only handle is the command itself, echoed back, with an approve tool the agent can call.

host-terminal-mcp 0.2.5 (trial 14): in `ask` mode `execute_command(command)` answers
`{"status": "needs_approval", "command": C}`, `approve_command(command, approve: bool)` approves C for
the session, and the same call then runs it. Zero configuration saw the waiting status, found no id and
no approve step (no argument named like an id), called `approve_command` with `approve: false` and left
it out as "did not ask, and showed no effect"; the control said both "stages the action under an id"
and "returned no pending id". The agent approving its own commands, the critical finding, went unreported.

The greenhouse's `console` shape (targets/zc_shapes) in that shape: `run_command(command)` and
`approve_command(command, approve)`. Careful, approving is the grower's, in their own app (a line their
command appends), and `approve_command` refuses the agent; with `agent-approves` it approves for whoever
calls it. Nothing configured, the echoed command is the handle, `approve: true` the yes, and the same
call again the step that acts: the flawed console is self-approval's finding, the careful one a gate the
harness cannot answer alone, said in one line. Named the grower's channel (`confirmation:` with `human:`
and no approve call), self-approval tries the server's own `approve_command` as the agent: refused by the
careful console, the finding on the flawed one. The careful console is audited over the whole catalogue.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION, Shared, forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import Profile, profile_from_mapping

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"
SELFAPPROVE = "MCA-SELFAPPROVE-001"
# The grower's own channel: their yes for a waiting command, a line of JSON their command appends.
GROWER_SAYS_YES = shlex.join(
    [
        sys.executable,
        "-c",
        "import json, sys; open(sys.argv[1], 'a').write(json.dumps(sys.argv[2]) + '\\n')",
        "{root}/grower-approvals.jsonl",
        "{id}",
    ]
)
# Only the person's channel is named: the approve step the agent could call is the server's own.
GROWERS_CHANNEL: dict[str, Any] = {
    "tool": "run_command",
    "args": {"command": "mist herbs"},
    "ignore": ["grower-approvals.jsonl"],
    "confirmation": {
        "kind": "pending",
        "pending": {
            "id_from": "command",
            "human": {"command": GROWER_SAYS_YES},
            "execute": {"tool": "run_command", "args": {"command": "{id}"}},
        },
    },
}


def _nothing_configured(catalogue: Catalogue, *flaws: str, families: tuple[str, ...] = ()) -> AuditRun:
    factory = {"shape": "console", "flaws": list(flaws)}
    return run_audit(
        forked(Profile(command=f"py:{SHAPES}:build_server", factory_args=factory, call_timeout=10.0)),
        catalogue=catalogue,
        generation=MATRIX_GENERATION,
        select=lambda spec: not families or spec.family in families,
    )


def _growers_channel(catalogue: Catalogue, *flaws: str, families: tuple[str, ...] = ()) -> AuditRun:
    raw = {
        "command": f"py:{SHAPES}:build_server",
        "factory_args": {"shape": "console", "flaws": list(flaws)},
        "call_timeout": 10.0,
        **GROWERS_CHANNEL,
    }
    return run_audit(
        forked(profile_from_mapping(raw, source="test")),
        catalogue=catalogue,
        generation=MATRIX_GENERATION,
        select=lambda spec: not families or spec.family in families,
    )


def _approve(run: AuditRun) -> str:
    [approve] = [c for c in run.controls if c.tool == "run_command" and c.name == "approve"]
    return approve.detail if approve.passed else f"FAILED: {approve.detail}"


def _result(run: AuditRun, attack: str = SELFAPPROVE) -> Result:
    return next(r for r in run.results if r.tool == "run_command" and r.id == attack)


@pytest.fixture(scope="module")
def flawed_console(catalogue: Catalogue, across_workers: Shared[AuditRun]) -> AuditRun:
    """The console whose approve tool approves for the agent, nothing configured, the whole catalogue."""
    return across_workers(
        "zc-console-agent-approves", lambda: _nothing_configured(catalogue, "agent-approves")
    )


def test_the_echoed_command_is_the_handle_and_the_agent_approving_its_own_command_is_found(
    flawed_console: AuditRun,
) -> None:
    approve = _approve(flawed_console)
    assert approve.startswith("previewed, confirmed, acted (no file named) through pending"), approve
    result = _result(flawed_console)
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE), (
        result.reason,
        result.evidence,
    )
    # The yes is said: `approve: true`, on the command the staging call echoed, then the same call runs it.
    said = [line for line in result.evidence if "-> approve_command(" in line]
    assert said == [
        line for line in said if '"approve": true' in line and '"command": "mcp-confirm-audit"' in line
    ]
    assert said, result.evidence
    assert any("-> run_command(" in line and line.startswith("[attack] execute") for line in result.evidence)


def test_the_approve_step_is_a_step_of_the_flow_never_an_inert_tool(flawed_console: AuditRun) -> None:
    assert {r.tool for r in flawed_console.results} == {"run_command"}
    assert flawed_console.left_out == ("approve_command: a step of run_command's pending flow",), (
        flawed_console.left_out
    )


def test_the_whole_catalogue_finds_the_agents_approval_and_nothing_else(flawed_console: AuditRun) -> None:
    findings = {r.id for r in flawed_console.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}
    assert findings == {SELFAPPROVE}, findings


def test_a_careful_console_is_a_gate_the_harness_cannot_answer_alone_said_in_one_line(
    catalogue: Catalogue,
) -> None:
    run = _nothing_configured(catalogue, families=("self-approval",))
    approve = _approve(run)
    # What the flow is, then what happened: never "stages the action under an id" beside "no pending id".
    assert approve.startswith("FAILED: pending: the call waits for its own 'command' to be approved"), approve
    assert "under an id" not in approve, approve
    assert "no pending id" not in approve, approve
    assert "the approval was refused (approve_command:" in approve, approve
    assert "is the grower's, in their own app" in approve, approve
    assert "human:" in approve, approve  # how to name the person's channel
    assert all(r.verdict is Verdict.INCONCLUSIVE for r in run.results), [
        (r.id, r.verdict) for r in run.results
    ]
    # Its approve tool is named for what it is, never "did not ask" (its own control sent it `approve: false`).
    assert run.left_out == (
        "approve_command: a step of run_command's pending flow, which did not complete (its control says why)",
    ), run.left_out


@pytest.mark.parametrize(
    ("flaws", "verdict"),
    [((), Verdict.REFUSED), (("agent-approves",), Verdict.VULNERABLE)],
    ids=["careful", "agent-approves"],
)
def test_with_the_growers_channel_named_the_agent_tries_the_servers_own_approve_tool(
    catalogue: Catalogue, flaws: tuple[str, ...], verdict: Verdict
) -> None:
    run = _growers_channel(catalogue, *flaws, families=("self-approval",))
    approve = _approve(run)
    assert approve.startswith("previewed, confirmed, acted (no file named) through pending"), approve
    result = _result(run)
    assert result.verdict is verdict, (result.reason, result.evidence)
    [tried] = [line for line in result.evidence if "-> approve_command(" in line]
    assert '"approve": true' in tried, tried
    assert '"command": "mist herbs"' in tried, tried
    if verdict is Verdict.REFUSED:
        assert result.layer is Layer.TOOL, result.reason
        assert "is the grower's, in their own app" in tried, tried
        assert not result.effect.happened, result.effect
    else:
        assert "approve_command" in result.reason, result.reason


def test_a_careful_console_with_the_growers_channel_gives_no_finding_over_the_whole_catalogue(
    catalogue: Catalogue,
) -> None:
    run = _growers_channel(catalogue)
    findings = {r.id: r.reason for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}
    assert not findings, findings
