"""Confirmations that are not MRTR, and clients that cannot be asked: every family proven both ways.

The confirm-kinds reference server (targets/confirm_kinds) in each mechanism,
careful and with one flaw each, as real stdio subprocesses; and the MRTR
reference server for a client that declares no elicitation.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from baselined import assert_green_as_it_is, assert_green_with_its_findings_baselined
from conftest import MATRIX_GENERATION, REFERENCE_SERVER, forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import UNASKED, AttackSpec, Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.techniques import ANY, traits

# The families that judge any mechanism (out-of-root too, but its own test runs it over the flows).
ANY_MECHANISM = frozenset(n for n, t in traits().items() if t.mechanisms == ANY) - {"out-of-root"}

TARGETS = Path(__file__).resolve().parents[2] / "targets"
KINDS_SERVER = TARGETS / "confirm_kinds" / "server.py"
# The same gates and flaws on an action that names no file: a robot arm seen through arm_status.
ARM_SERVER = TARGETS / "robot_arm" / "server.py"
APPROVE_CLI = TARGETS / "confirm_kinds" / "approve_cli.py"
# The families that judge any way of confirming; the MRTR families are proven elsewhere.
FAMILIES = tuple(sorted(ANY_MECHANISM))
V, W, R = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED


def _human(decision: str) -> str:
    # The person's own channel: a command writing into the inbox beside the root.
    return shlex.join([sys.executable, str(APPROVE_CLI), "--inbox", "{root}/../approvals", "{id}", decision])


def kinds_command(mechanism: str, *flaws: str) -> str:
    words = [sys.executable, str(KINDS_SERVER), "--root", "{root}", "--mechanism", mechanism]
    for flaw in flaws:
        words += ["--flaw", flaw]
    return shlex.join(words)


def audit(
    catalogue: Catalogue,
    mechanism: str,
    *flaws: str,
    stdio: bool = False,
    server: Path = KINDS_SERVER,
    attacks: tuple[str, ...] | None = None,
    **settings: object,
) -> AuditRun:
    """In-process unless `stdio` (fast; the transports are proven alike in test_transports.py).

    Every family that judges any mechanism, or only the `attacks` named (none: the controls alone).
    """
    if stdio:
        target: dict[str, object] = {"command": kinds_command(mechanism, *flaws)}
    else:
        factory = {"mechanism": mechanism, "flaws": list(flaws)}
        target = {"command": f"py:{server}:build_server", "factory_args": factory}
    tool = "move_joint" if server == ARM_SERVER else "delete_file"
    raw = {**target, "tool": tool, "call_timeout": 10.0, **settings}
    profile = profile_from_mapping(raw, source="test")
    # Over stdio, each process of the server is forked from a zygote that imported the SDK once.
    profile = forked(profile) if stdio else profile

    def select(spec: AttackSpec) -> bool:
        return spec.family in FAMILIES if attacks is None else spec.id in attacks

    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


HUMAN_CHANNEL = {
    "confirmation": {
        "kind": "pending",
        "pending": {
            "id_from": "pending_id",
            "human": {"command": _human("approved"), "decline": _human("declined")},
            "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
        },
    }
}
# The same channel with the person's own view of the request first: `approve_cli.py ID show` prints what
# the server keeps for them (the text its staging call answers), read as a terminal shows it. Without
# such a step nothing says what the person reads, and prompt-forging judges nothing (test_unseen_request.py).
HUMAN_CHANNEL_SHOWN = {
    "confirmation": {
        "kind": "pending",
        "pending": {
            "id_from": "pending_id",
            "human": [{"command": _human("show"), "shows": True}, {"command": _human("approved")}],
            "decline": [{"command": _human("declined")}],
            "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
        },
    }
}

# Every token flow completes with the agent's calls alone: a gate that never involves a person.
TOKEN_BASELINE = {"MCA-SELFAPPROVE-001": V}
# (mechanism, flaw or "careful", profile settings) -> what must be found (anything else must be refused
# or not applicable)
CASES: dict[str, tuple[str, str | None, dict[str, object], dict[str, Verdict]]] = {
    "token careful": ("token", None, {}, TOKEN_BASELINE),
    "predictable-token": ("token", "predictable-token", {}, {**TOKEN_BASELINE, "MCA-TOKMINT-002": V}),
    "reusable-token": (
        "token",
        "reusable-token",
        {},
        {**TOKEN_BASELINE, "MCA-TOKREUSE-001": V, "MCA-TOKREUSE-003": V},
    ),
    "token-not-bound-to-args": (
        "token",
        "token-not-bound-to-args",
        {},
        {**TOKEN_BASELINE, "MCA-TOKOTHER-001": V},
    ),
    "loosening-policy-tool": ("token", "loosening-policy-tool", {}, {**TOKEN_BASELINE, "MCA-POLICY-001": V}),
    # truncate_file empties the file delete_file deletes: the same place, another change (weak).
    "ungated-second-tool": ("token", "ungated-second-tool", {}, {**TOKEN_BASELINE, "MCA-UNGATED-001": W}),
    "pending careful, a human's channel": ("pending", None, HUMAN_CHANNEL, {}),
    # The server waits for "your approval"; its own approve tool gives it.
    "agent-approval": ("pending", "agent-approval", {}, {"MCA-SELFAPPROVE-001": V}),
    "agent-approval beside a human's channel": (
        "pending",
        "agent-approval",
        {
            "confirmation": {
                "kind": "pending",
                "pending": {
                    **HUMAN_CHANNEL["confirmation"]["pending"],
                    "approve": {"tool": "approve", "args": {"pending_id": "{id}"}},
                },  # type: ignore[index]
            }
        },
        {"MCA-SELFAPPROVE-001": V},
    ),
    # One wrong token (or id) revokes what is outstanding: the honest confirmation then does nothing.
    "wrong-guess-burns token": ("token", "wrong-guess-burns", {}, {**TOKEN_BASELINE, "MCA-BURN-001": W}),
    "wrong-guess-burns pending": ("pending", "wrong-guess-burns", HUMAN_CHANNEL, {"MCA-BURN-001": W}),
    "flag careful": ("flag", None, {}, {}),
    "self-attested-flag": ("flag", "self-attested-flag", {}, {"MCA-FLAGBYPASS-001": V}),
    # Clients that can be asked get the question; one that cannot gets a pending id it confirms itself.
    "agent-fallback-without-elicitation": (
        "flag",
        "agent-fallback-without-elicitation",
        {},
        {"MCA-DOWNGRADE-001": V, "MCA-DOWNGRADE-002": V},
    ),
}

# The layer every careful refusal is given by: the token store, the pending store and the
# policy are the tool's own checks; the MRTR flag server asks again, a tool refusal too.
CAREFUL_LAYER = {"capability-downgrade": Layer.PROTOCOL}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_flaw_is_caught_by_its_family_and_each_careful_variant_refused(
    catalogue: Catalogue, case: str
) -> None:
    _caught_by_its_family_and_refused_elsewhere(catalogue, case, KINDS_SERVER)


# The arm has no flag mechanism: its flag flaws are the file server's alone.
ARM_CASES = sorted(name for name, (mechanism, *_) in CASES.items() if mechanism in ("token", "pending"))
# On the arm, jog_joint turns the very joint move_joint turns and logs the same move: the gated
# change itself, at the same place, done around the gate (vulnerable, not weak).
ARM_VERDICTS = {"ungated-second-tool": {"MCA-UNGATED-001": V}}


@pytest.mark.parametrize("case", ARM_CASES)
def test_the_same_flaws_are_caught_when_the_confirmed_action_names_no_file(
    catalogue: Catalogue, case: str
) -> None:
    # Moving a robot arm: the token, the pending id and the policy guard a move seen only
    # through the read-only arm_status, with verdicts and layers exactly as on the file server.
    run = _caught_by_its_family_and_refused_elsewhere(catalogue, case, ARM_SERVER)
    approve = next(c for c in run.controls if c.name == "approve")
    assert "no file named" in approve.detail
    assert "tool:arm_status.moves[0]" in approve.detail
    if CASES[case][0] == "pending":
        # Staging shows in arm_status as a move waiting: learned as bookkeeping, never an effect.
        learned = next(c for c in run.controls if c.name == "bookkeeping")
        assert "tool:arm_status.waiting[*]" in learned.detail


# The arm that also keeps its pose as text (--pose-file): one move rewrites its joint's line and
# appends a line for the move, two lines of one file. A race is counted in moves, in units of what one
# honest move changed (the approve control's), never in the lines one move rewrites.
RACED_POSE = [("pending", None, R), ("token", None, R), ("token", "reusable-token", V)]


@pytest.mark.parametrize(("mechanism", "flaw", "verdict"), RACED_POSE)
def test_a_race_is_counted_in_moves_not_in_the_lines_one_move_rewrites(
    catalogue: Catalogue, mechanism: str, flaw: str | None, verdict: Verdict
) -> None:
    factory = {"mechanism": mechanism, "flaws": [flaw] if flaw else [], "pose_file": "arm.pose"}
    raw = {
        "command": f"py:{ARM_SERVER}:build_server",
        "factory_args": factory,
        "tool": "move_joint",
        "call_timeout": 10.0,
        "effect": [{"file": "arm.pose"}],
        **(HUMAN_CHANNEL if mechanism == "pending" else {}),
    }

    def raced(spec: AttackSpec) -> bool:
        return spec.id == "MCA-TOKREUSE-003"

    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=raced,
        generation=MATRIX_GENERATION,
    )
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    result = run.by_id()["MCA-TOKREUSE-003"]
    assert result.verdict is verdict, (result.reason, result.evidence)
    if verdict is R:
        assert result.layer is Layer.TOOL, result.evidence
        assert any("one honest effect changed 2 items" in line for line in result.evidence), result.evidence
        # Nothing of an arm's move is put back: each stays, and the evidence says so.
        assert "effects: 1 during the race, 1 in all (each effect stays, counted)" in result.evidence


def _caught_by_its_family_and_refused_elsewhere(catalogue: Catalogue, case: str, server: Path) -> AuditRun:
    mechanism, flaw, settings, expected = CASES[case]
    if server == ARM_SERVER:
        expected = {**expected, **ARM_VERDICTS.get(case, {})}
    run = audit(catalogue, mechanism, *([flaw] if flaw else []), server=server, **settings)
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    for result in run.results:
        if result.id in expected:
            assert result.verdict is expected[result.id], (result.id, result.reason, result.evidence)
        elif result.verdict is not Verdict.NOT_APPLICABLE:
            layer = CAREFUL_LAYER.get(result.family, Layer.TOOL)
            assert (result.id, result.verdict, result.layer) == (result.id, R, layer), result.evidence
    judged = {r.id for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE}
    assert set(expected) <= judged
    want = "mrtr" if mechanism == "flag" else mechanism
    assert {r.mechanism for r in run.results} == {want}
    # The CI gate: green with the findings baselined, or as it is when there are none.
    if expected:
        assert_green_with_its_findings_baselined(run, catalogue)
    else:
        assert_green_as_it_is(run)
    return run


def test_a_pending_id_the_human_declined_is_not_executed(catalogue: Catalogue) -> None:
    # Over stdio: the server is a process of its own, the human's command another. The attack alone:
    # every other family on this careful server is judged in process above ("pending careful, ...").
    run = audit(catalogue, "pending", stdio=True, attacks=("MCA-TOKREUSE-002",), **HUMAN_CHANNEL)
    declined = run.by_id()["MCA-TOKREUSE-002"]
    assert (declined.verdict, declined.layer) == (R, Layer.TOOL), declined.evidence
    assert "declined" in declined.reason


@pytest.mark.parametrize(
    ("mechanism", "flaws", "found"),
    [
        ("token", (), "previewed, confirmed, acted (relative paths) through token"),
        ("pending", ("agent-approval",), "through pending"),
        ("flag", (), "asked, accepted, acted"),
    ],
)
def test_zero_config_detects_the_mechanism_and_completes_its_honest_flow(
    catalogue: Catalogue, mechanism: str, flaws: tuple[str, ...], found: str
) -> None:
    # The controls alone: what is asserted here is how the honest flow was found and completed.
    run = audit(catalogue, mechanism, *flaws, tool=None, attacks=())
    approve = [c for c in run.controls if c.name == "approve" and c.tool == "delete_file"]
    assert approve, run.controls
    assert all(found in c.detail for c in approve), approve
    alone = [c for c in run.controls if c.name == "preview-alone"]
    assert all(c.passed for c in alone), alone


@pytest.mark.parametrize(("mechanism", "flaws"), [("token", ()), ("pending", ("agent-approval",))])
def test_zero_config_detects_the_mechanism_of_an_action_that_names_no_file(
    catalogue: Catalogue, mechanism: str, flaws: tuple[str, ...]
) -> None:
    # No profile at all: harmless joint and degrees from the schema, the effect probe found
    # among the read-only tools, the mechanism from the schema (a token) or the first answer.
    run = audit(catalogue, mechanism, *flaws, server=ARM_SERVER, tool=None, attacks=())
    approve = next(c for c in run.controls if c.name == "approve" and c.tool == "move_joint")
    assert approve.passed, run.controls
    assert f"through {mechanism}" in approve.detail
    assert "tool:arm_status" in approve.detail
    alone = next(c for c in run.controls if c.name == "preview-alone" and c.tool == "move_joint")
    assert alone.passed, alone
    # The flow's own steps and the gate's rules are no gates of their own: judged through
    # move_joint's families, named as not audited, and no honest flow of theirs fails the run.
    left_out = {line.split(":", 1)[0] for line in run.left_out}
    steps = {"set_policy", *(("execute_pending", "approve") if mechanism == "pending" else ())}
    assert left_out == steps, run.left_out
    assert {c.tool for c in run.controls} == {"move_joint", "jog_joint"}


def test_zero_config_detects_a_pending_flow_it_cannot_approve_and_says_how_to_name_the_human(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, "pending")
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed
    assert approve.detail.startswith("pending:")
    assert "human" in approve.detail
    # Controls first: nothing is judged when the honest flow cannot be completed.
    assert {r.verdict for r in run.results} == {Verdict.INCONCLUSIVE}


def test_a_profile_confirmation_overrides_detection(catalogue: Catalogue) -> None:
    # The flaw's flag, stated as the mechanism: without it the tool asks (no effect), with it it acts.
    stated = {"confirmation": {"kind": "flag", "flag": {"arg": "human_approved", "value": True}}}
    # The two attacks judged here (the flag family's proof both ways is CASES' above).
    judged = ("MCA-SELFAPPROVE-001", "MCA-FLAGBYPASS-001")
    run = audit(catalogue, "flag", "self-attested-flag", attacks=judged, **stated)
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed
    assert "through flag" in approve.detail
    # Without the flag the server asks the user: the caller's own flag is a way around them.
    self_approved = run.by_id()["MCA-SELFAPPROVE-001"]
    assert self_approved.verdict is V, self_approved.evidence
    assert "where without it the tool asks a human" in self_approved.reason
    # The stated flag is self-approval's; the tool's other switches (reversible, scope) still ask.
    bypass = run.by_id()["MCA-FLAGBYPASS-001"]
    assert (bypass.verdict, bypass.layer) == (R, Layer.TOOL), bypass.evidence
    assert "human_approved" not in " ".join(bypass.evidence), bypass.evidence
    # MRTR families do not apply to a tool stated to confirm another way, and say so.
    # MRTR families do not apply to a tool stated to confirm another way, and say so.
    assert _stated_flag(catalogue, stated, "self-attested-flag").verdict is Verdict.NOT_APPLICABLE
    # On the careful server the flag does nothing: the stated flow cannot be completed.
    assert _stated_flag(catalogue, stated).verdict is Verdict.INCONCLUSIVE


@pytest.mark.parametrize(("write_rate", "verdict"), [(1, Verdict.INCONCLUSIVE), (None, V)])
def test_a_rate_limit_in_front_of_the_flag_is_not_the_gate_refusing(
    catalogue: Catalogue, write_rate: int | None, verdict: Verdict
) -> None:
    # sendgrid-mcp-secure: the caller's own flag acts (true), but once its write bucket was spent by the
    # run's earlier calls, "write rate limit reached (20/hour)" was taken for the gate refusing.
    stated = {"confirmation": {"kind": "flag", "flag": {"arg": "human_approved", "value": True}}}
    factory = {"mechanism": "flag", "flaws": ["self-attested-flag"], "write_rate": write_rate}
    target = {"command": f"py:{KINDS_SERVER}:build_server", "factory_args": factory}
    profile = profile_from_mapping({**target, "tool": "delete_file", **stated}, source="test")
    run = run_audit(profile, catalogue=catalogue, select=lambda spec: spec.id == "MCA-SELFAPPROVE-001")
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    result = run.by_id()["MCA-SELFAPPROVE-001"]
    assert result.verdict is verdict, (result.reason, result.evidence)
    if verdict is Verdict.INCONCLUSIVE:
        assert "a rate limit ('rate limit')" in result.reason, result.reason


def _stated_flag(catalogue: Catalogue, stated: dict[str, object], *flaws: str) -> Result:
    target = {
        "command": f"py:{KINDS_SERVER}:build_server",
        "factory_args": {"mechanism": "flag", "flaws": list(flaws)},
    }
    profile = profile_from_mapping({**target, "tool": "delete_file", **stated}, source="test")
    run = run_audit(profile, catalogue=catalogue, select=lambda spec: spec.id == "MCA-REPLAY-001")
    return run.by_id()["MCA-REPLAY-001"]


def _reference(catalogue: Catalogue, *flaws: str) -> AuditRun:
    target = {"command": f"py:{REFERENCE_SERVER}:build_server", "factory_args": {"flaws": list(flaws)}}
    profile = profile_from_mapping({**target, "tool": "delete_file"}, source="t")
    return run_audit(profile, catalogue=catalogue, select=lambda s: s.family == "capability-downgrade")


def test_the_careful_mrtr_server_answers_a_client_that_cannot_be_asked_with_32021(
    catalogue: Catalogue,
) -> None:
    run = _reference(catalogue)
    for result in run.results:
        assert (result.verdict, result.layer) == (R, Layer.PROTOCOL), result.evidence
        assert "-32021" in " ".join(result.evidence)
        assert "elicitation" in result.reason


def test_an_mrtr_server_that_sends_its_form_to_a_client_that_declared_none_is_caught(
    catalogue: Catalogue,
) -> None:
    # That client cannot answer the form: the MUST NOT broken is weak, nothing acted (test_downgrade_answers).
    run = _reference(catalogue, "elicits-without-capability")
    for result in run.results:
        assert (result.verdict, result.layer) == (W, Layer.PROTOCOL), result.evidence
        assert "MUST NOT" in result.reason


def test_a_preview_that_acts_fails_the_approve_control_and_is_never_learned_as_bookkeeping(
    catalogue: Catalogue,
) -> None:
    # The profile forgot the preview switch, and the loosened arm moves on the plain call:
    # what the "preview" changed is the action itself, not the target's bookkeeping. It moved where
    # the profile says the effect shows, handing out no token: the tool acted unasked (the setup's
    # loosened policy lets it), as an MRTR tool that never asks does; not a profile mistake.
    stated = {
        "setup": [{"tool": "set_policy", "args": {"auto_approve_under_degrees": 100}}],
        "args": {"joint": "base", "degrees": 5},
        "confirmation": {"kind": "token", "token": {"into": "confirm_token"}},
        "effect": [{"tool": "arm_status"}],
    }
    run = audit(catalogue, "token", "loosening-policy-tool", server=ARM_SERVER, **stated)
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed
    assert "itself took effect with no approval (tool:arm_status.joints.base" in approve.detail
    unasked = next(c for c in run.controls if c.name == UNASKED)
    assert unasked.finding, unasked
    assert not [c for c in run.controls if c.name == "bookkeeping"], run.controls
    assert {r.verdict for r in run.results} == {Verdict.INCONCLUSIVE}


LOGS_EVERY_CALL = '''
from pathlib import Path
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations


def build_server(root):
    server = MCPServer("logs-every-call")
    (Path(root) / "calls.log").write_text("started\\n")

    def close_account(account_id: int) -> str:
        """Close an account; only an operator may, on their own console."""
        with (Path(root) / "calls.log").open("a") as log:
            log.write(f"refused close_account {account_id}\\n")
        raise ToolError("account closures are approved by an operator, not over MCP")

    server.add_tool(close_account, annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
    return server
'''


def test_a_server_that_logs_every_call_into_its_root_is_not_taken_for_one_that_acts_unasked(
    catalogue: Catalogue, tmp_path: Path
) -> None:
    # It refuses and logs the refusal: the line it appends to its own log is no effect. Zero
    # configuration cannot tell that change from one (the approve control fails, and nothing is
    # judged), but it is never the finding that the tool acted unasked.
    (tmp_path / "logs_every_call.py").write_text(LOGS_EVERY_CALL)
    command = f"py:{tmp_path / 'logs_every_call.py'}:build_server"
    profile = profile_from_mapping({"command": command, "call_timeout": 5.0}, source="test")
    run = run_audit(profile, catalogue=catalogue, select=lambda spec: spec.id == "MCA-SELFAPPROVE-001")
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed
    assert "unasked" not in {c.name for c in run.controls}, run.controls
    assert {r.verdict for r in run.results} == {Verdict.INCONCLUSIVE}
