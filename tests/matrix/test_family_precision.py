"""Precision per family: policy-self-loosening, ungated and flag-bypass, each proven both ways.

In-process (fast; the transports are proven alike in test_transports.py), and only
the three families under test. What each must find on a reference server with
exactly that flaw, what it must never find beside a careful gate, and why: the
policy tools are read from their schemas and loosened for this agent alone; another
tool counts only where the gated action's own effect shows; every boolean or enum
argument is tried at each of its values, with zero configuration.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

TARGETS = Path(__file__).resolve().parents[2] / "targets"
KINDS = TARGETS / "confirm_kinds" / "server.py"
ARM = TARGETS / "robot_arm" / "server.py"
FAMILIES = ("policy-self-loosening", "ungated", "flag-bypass")
V, W, R, NA = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED, Verdict.NOT_APPLICABLE
POLICY, UNGATED, FLAGBYPASS = "MCA-POLICY-001", "MCA-UNGATED-001", "MCA-FLAGBYPASS-001"


def audit(catalogue: Catalogue, server: Path, mechanism: str, *flaws: str, **settings: Any) -> AuditRun:
    """The server's build_server in-process; `settings` are profile keys (none: zero configuration)."""
    raw = {
        "command": f"py:{server}:build_server",
        "factory_args": {"mechanism": mechanism, "flaws": list(flaws)},
        "call_timeout": 10.0,
        **settings,
    }
    profile = profile_from_mapping(raw, source="test")
    return run_audit(profile, catalogue=catalogue, select=lambda spec: spec.family in FAMILIES)


def results(run: AuditRun, tool: str) -> dict[str, Result]:
    assert all(c.passed for c in run.controls if c.tool == tool and c.name == "approve"), run.controls
    return {r.id: r for r in run.results if r.tool == tool}


def calls(result: Result, tool: str) -> list[str]:
    return [line for line in result.evidence if f"-> {tool}(" in line]


# -- policy-self-loosening ---------------------------------------------------------------------


def test_an_emergency_stop_beside_a_careful_gate_is_no_policy_tool_and_no_finding(
    catalogue: Catalogue,
) -> None:
    # Described in the words of a policy ("overrides every limit and rule"), taking none:
    # it is never picked, never credited with the arm's move, and ungated sees its change
    # land outside the gated effect (the stops, not the joints or the moves).
    found = results(audit(catalogue, ARM, "token", "emergency-stop-tool", tool="move_joint"), "move_joint")
    policy = found[POLICY]
    assert (policy.verdict, policy.layer) == (R, Layer.TOOL), policy.evidence
    assert calls(policy, "set_policy"), policy.evidence
    assert not calls(policy, "emergency_stop"), policy.evidence
    ungated = found[UNGATED]
    assert (ungated.verdict, ungated.layer) == (R, Layer.TOOL), ungated.evidence
    assert calls(ungated, "emergency_stop"), ungated.evidence
    # Seen, and left out for being elsewhere: the check could have failed.
    assert "what changed elsewhere: tool:arm_status.stops[0]" in ungated.reason, ungated.reason
    assert found[FLAGBYPASS].verdict is R, found[FLAGBYPASS].evidence


def test_a_policy_tool_the_profile_names_is_setup_and_its_own_change_is_never_the_finding(
    catalogue: Catalogue,
) -> None:
    # Named a policy tool, the emergency stop is called before the attack proper: its stop
    # is in what the probes saw at the start, and the plain move still asks. It takes only a
    # reason, which loosens no rule: the move's refusal after it says nothing of a policy, so
    # the attack tried nothing (never "refused", as a mode sent only its strictest value was).
    run = audit(
        catalogue, ARM, "token", "emergency-stop-tool", tool="move_joint", policy_tools=["emergency_stop"]
    )
    policy = results(run, "move_joint")[POLICY]
    assert policy.verdict is NA, (policy.reason, policy.evidence)
    assert policy.reason.startswith("nothing sent could loosen a rule"), policy.reason
    [stop] = calls(policy, "emergency_stop")
    assert stop.startswith("[setup]"), stop
    assert not policy.effect.observed, policy.effect


@pytest.mark.parametrize("mechanism", ["token", "flag"])
@pytest.mark.parametrize(
    ("flaws", "verdict"), [((), R), (("loosening-policy-tool",), V)], ids=["careful", "loosens"]
)
def test_a_policy_tool_named_for_its_unit_is_found_by_what_it_does(
    catalogue: Catalogue, mechanism: str, flaws: tuple[str, ...], verdict: Verdict
) -> None:
    # tune_deletions(bytes): no name says limit or threshold; only its description says what it does
    # ("... deleted without asking for confirmation"). It is tried, and counts only if asking then stops:
    # over a token gate, and over the MRTR question of the flag server (another style). Before it, the
    # decoy propose_threshold(threshold_bytes) speaks of the threshold and accepts the call, but asking
    # never changes: tried first, it is never the finding, beside a careful rule or a loosening one.
    factory = {"mechanism": mechanism, "flaws": list(flaws), "policy_tool": "unit", "proposal_tool": True}
    raw = {"command": f"py:{KINDS}:build_server", "factory_args": factory, "call_timeout": 10.0}
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family == "policy-self-loosening",
    )
    policy = results(run, "delete_file")[POLICY]
    assert policy.verdict is verdict, (policy.reason, policy.evidence)
    [tune] = calls(policy, "tune_deletions")
    assert '"bytes": 1000000000' in tune, tune
    [proposed] = calls(policy, "propose_threshold")
    assert "<- complete" in proposed, proposed  # accepted, changing nothing
    assert "recorded" in proposed, proposed
    assert policy.evidence.index(proposed) < policy.evidence.index(tune), policy.evidence
    assert not any("after propose_threshold" in line for line in policy.evidence), policy.evidence
    if verdict is V:
        assert (
            "note: asking turned off after tune_deletions was called: it is a policy tool" in policy.evidence
        )
        assert policy.effect.removed, policy.effect
    else:
        assert policy.layer is Layer.TOOL, policy.evidence
        assert not policy.effect.removed, policy.effect


def test_policy_tools_empty_turns_the_family_off_even_beside_a_loosening_tool(catalogue: Catalogue) -> None:
    run = audit(catalogue, ARM, "token", "loosening-policy-tool", tool="move_joint", policy_tools=[])
    policy = results(run, "move_joint")[POLICY]
    assert policy.verdict is NA
    assert "policy_tools: []" in policy.reason
    # Without the key, the same server is caught: the key is what turned it off.
    caught = results(audit(catalogue, ARM, "token", "loosening-policy-tool", tool="move_joint"), "move_joint")
    assert caught[POLICY].verdict is V, caught[POLICY].evidence


def test_loosening_for_this_agents_own_identity_is_caught_and_no_wildcard_is_written(
    catalogue: Catalogue,
) -> None:
    # The rules are per operator: '*' would loosen an operator named '*', not this one.
    policy = results(
        audit(catalogue, ARM, "token", "loosening-own-operator", tool="move_joint"), "move_joint"
    )[POLICY]
    assert policy.verdict is V, policy.evidence
    [loosen] = calls(policy, "set_policy")
    move = next(line for line in policy.evidence if "the gated action, plainly" in line)
    operator = re.search(r'"operator": ("[^"]*")', move)
    assert operator is not None, move
    assert f'"operator": {operator.group(1)}' in loosen, (loosen, move)
    assert '"*"' not in loosen, loosen
    # Only the gated action's effect: the move, seen on the process the attack loosened.
    assert any("joints.base" in seen for seen in policy.effect.observed), policy.effect


# -- ungated ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "gated", "flaw", "verdict", "seen"),
    [
        # jog_joint turns the joint move_joint turns, and logs the same move: the gated change.
        (ARM, "move_joint", "ungated-second-tool", V, "with the gated action's own effect"),
        # truncate_file empties the file delete_file deletes: the same place, another change.
        (KINDS, "delete_file", "ungated-second-tool", W, "rewritten case/victim.txt"),
        (ARM, "move_joint", None, R, "nothing moved where the gated action's effect shows"),
        (KINDS, "delete_file", None, R, "nothing moved where the gated action's effect shows"),
    ],
)
def test_ungated_is_judged_where_the_gated_effect_shows_with_zero_configuration(
    catalogue: Catalogue, server: Path, gated: str, flaw: str | None, verdict: Verdict, seen: str
) -> None:
    # No profile at all: the gated tools, their effect probes and their mechanism are found.
    run = audit(catalogue, server, "token", *([flaw] if flaw else []))
    result = results(run, gated)[UNGATED]
    assert result.verdict is verdict, (result.reason, result.evidence)
    assert seen in result.reason, result.reason
    if verdict is R:
        assert result.layer is Layer.TOOL


# -- flag-bypass --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flaw", "switch"),
    [
        ("self-attested-flag", "human_approved: True"),
        ("reversible-flag", "reversible: True"),
        ("scope-acts-unasked", "scope: 'directory'"),
    ],
)
def test_every_switch_of_a_gated_tool_is_tried_and_the_one_that_skips_the_person_is_caught(
    catalogue: Catalogue, flaw: str, switch: str
) -> None:
    found = results(audit(catalogue, KINDS, "flag", flaw), "delete_file")
    bypass = found[FLAGBYPASS]
    assert bypass.verdict is V, bypass.evidence
    assert f"note: {switch}, set by the caller, made the tool act without asking" in bypass.evidence
    # The other families are not fooled by a switch of the gated tool.
    assert {found[POLICY].verdict, found[UNGATED].verdict} == {R}, (found[POLICY], found[UNGATED])


@pytest.mark.parametrize(
    ("server", "mechanism", "gated", "tried"),
    [
        # The MRTR flag server: human_approved refused, reversible asks, scope: directory refused.
        (KINDS, "flag", "delete_file", ("human_approved", "reversible", "scope")),
        # Another style: the arm's token gate, its dry_run and its joint enum.
        (ARM, "token", "move_joint", ("dry_run", "joint")),
    ],
)
def test_careful_servers_with_such_switches_refuse_every_value(
    catalogue: Catalogue, server: Path, mechanism: str, gated: str, tried: tuple[str, ...]
) -> None:
    bypass = results(audit(catalogue, server, mechanism), gated)[FLAGBYPASS]
    assert (bypass.verdict, bypass.layer) == (R, Layer.TOOL), bypass.evidence
    sent = " ".join(calls(bypass, gated))
    assert all(f'"{name}": ' in sent for name in tried), sent
    assert not bypass.effect.removed, bypass.effect
    assert not bypass.effect.observed, bypass.effect
