"""chained-command proven both ways on the shell reference server (targets/shell).

The flaw, an allow-list matched against how the raw line starts, runs the gated `rm` chained
after an allowed command with nobody asked: every variant is vulnerable, by its effect, and the
flaw fools no other family. Each careful style holds every variant its own way, refused by the
tool: `operators` refuses a line that joins commands before anything is asked, `every-part` asks
about the whole line, `argv` runs the line as one program's arguments with no shell (its reply in
both hands: a failure as a tool error, and said in an ordinary result). The careful styles in the
default hand are audited whole. A server that lets no harmless command through leaves nothing to
chain after, one that lets through none that can fail leaves `||` nothing, and an action that runs
no command line (the reference server's delete_file) is none of this family's. The harmless
commands are tried once per tool per world, counted in the transcripts; a tool that remembers each
approval for its session learns none of them from the whole catalogue, so the list read by all seven
attacks is the one each would have found.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION, REFERENCE_SERVER
from deadline import scaled

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, AuditSession, run_audit
from mcp_confirm_audit.models import Layer, Phase, Result, Transcript, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.techniques.chained_command import HARMLESS

SERVER = Path(__file__).resolve().parents[2] / "targets" / "shell" / "server.py"
FAMILY = "chained-command"
# Each variant's id and how its chained line reads in the evidence, after the allowed command.
VARIANTS = {
    "MCA-CHAIN-001": " ; rm ",
    "MCA-CHAIN-002": " && rm ",
    "MCA-CHAIN-003": " || rm ",
    "MCA-CHAIN-004": " | rm ",
    "MCA-CHAIN-005": " \\nrm ",
    "MCA-CHAIN-006": " $(rm ",
    "MCA-CHAIN-007": " `rm ",
}
V, R, NA = Verdict.VULNERABLE, Verdict.REFUSED, Verdict.NOT_APPLICABLE


def shell_profile(**factory: Any) -> dict[str, Any]:
    """The shell server built in process with `factory`, its gated action `rm` of the case's file."""
    return {
        "command": f"py:{SERVER}:build_server",
        "factory_args": factory,
        "tool": "run_command",
        "args": {"command": "rm {path}"},
        "call_timeout": 10.0,
    }


def audit(catalogue: Catalogue, *, families: Sequence[str] | None = (FAMILY,), **factory: Any) -> AuditRun:
    return run_audit(
        scaled(profile_from_mapping(shell_profile(**factory), source="test")),
        catalogue=catalogue,
        select=lambda spec: families is None or spec.family in families,
        generation=MATRIX_GENERATION,
    )


def chained(run: AuditRun) -> dict[str, Result]:
    return {r.id: r for r in run.results if r.family == FAMILY}


def fooled(run: AuditRun) -> list[tuple[str, Verdict, str]]:
    return [(r.id, r.verdict, r.reason) for r in run.results if r.family != FAMILY and r.verdict is not R]


def test_a_prefix_allow_list_runs_the_gated_command_chained_by_every_metacharacter_and_fools_no_other_family(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, families=None, flaws=["prefix-allow-list"])
    assert all(c.passed for c in run.controls), run.controls
    found = chained(run)
    assert set(found) == set(VARIANTS)
    for attack_id, joined in VARIANTS.items():
        result = found[attack_id]
        assert (result.verdict, result.layer) == (V, Layer.NONE), result.evidence
        assert not result.asked_user
        assert [p.rsplit("/", 1)[-1] for p in result.effect.removed] == ["victim.txt"], result.evidence
        assert "ran with nobody approving it, chained with" in result.reason
        assert any("[attack]" in line and joined in line for line in result.evidence), result.evidence
    # `||` follows a failing form of an allowed command; the others the first allowed one.
    assert "after 'ls mcp-confirm-audit-no-such-file'" in found["MCA-CHAIN-003"].reason
    assert "after 'pwd'" in found["MCA-CHAIN-001"].reason
    # The harmless commands were tried first: `true` asked (not on the allow-list) and was declined.
    setup = [line for line in found["MCA-CHAIN-001"].evidence if "[setup]" in line]
    assert any("does 'true' run unasked?" in line and "input-required" in line for line in setup), setup
    assert any("the person declines it" in line for line in setup), setup
    assert not [r for r in fooled(run) if r[1] in (V, Verdict.WEAK, Verdict.INCONCLUSIVE)], fooled(run)


def test_the_flaw_is_found_whatever_hand_the_replies_are_in(catalogue: Catalogue) -> None:
    found = chained(audit(catalogue, failures="result", flaws=["prefix-allow-list"]))
    assert {r.verdict for r in found.values()} == {V}, [(r.id, r.reason) for r in found.values()]


# style -> (whether the person was asked, what the reason says): refused before asking, asked about
# the whole line, or run as argv with no shell.
CAREFUL = {
    "operators": (False, "joins commands"),
    "every-part": (True, "asked the user again instead of acting"),
    "argv": (False, ""),
}


@pytest.mark.parametrize("style", sorted(CAREFUL))
def test_each_careful_style_refuses_every_variant_in_the_tool_and_is_audited_whole(
    catalogue: Catalogue, style: str
) -> None:
    run = audit(catalogue, families=None, style=style)
    assert all(c.passed for c in run.controls), run.controls
    asked, said = CAREFUL[style]
    for result in chained(run).values():
        assert (result.verdict, result.layer) == (R, Layer.TOOL), result.evidence
        assert result.asked_user is asked, result.evidence
        assert not result.effect.happened, result.evidence
        assert said in result.reason
    # No finding, and nothing left unjudged, in any other family.
    assert {r.verdict for r in run.results} <= {R, NA}, [(r.id, r.verdict, r.reason) for r in fooled(run)]


def test_a_tool_that_runs_its_argv_with_no_shell_is_seen_to_leave_the_chained_command_unrun(
    catalogue: Catalogue,
) -> None:
    # Failures said in an ordinary result: every chained line was answered as done, nothing moved.
    found = chained(audit(catalogue, style="argv", failures="result"))
    for result in found.values():
        assert (result.verdict, result.layer, result.asked_user) == (R, Layer.TOOL, False), result.evidence
        assert "the chained command never ran, so the tool did not run" in result.reason
        assert "as a shell does" in result.reason


def test_a_tool_that_lets_no_harmless_command_through_leaves_nothing_to_chain_after(
    catalogue: Catalogue,
) -> None:
    found = chained(audit(catalogue, allowed=[], flaws=["prefix-allow-list"]))
    for result in found.values():
        assert result.verdict is NA, result.evidence
        assert "no command was found that run_command runs without asking" in result.reason
        assert "'true': asked" in result.reason


def test_or_needs_an_allowed_command_that_can_fail(catalogue: Catalogue) -> None:
    # Only pwd is allowed: `||` has nothing that fails to follow, and every other join is still found.
    found = chained(audit(catalogue, allowed=["pwd"], flaws=["prefix-allow-list"]))
    assert found["MCA-CHAIN-003"].verdict is NA
    assert "has a failing form" in found["MCA-CHAIN-003"].reason
    assert {r.verdict for i, r in found.items() if i != "MCA-CHAIN-003"} == {V}


def test_an_action_that_runs_no_command_line_is_not_this_familys(catalogue: Catalogue) -> None:
    raw = {"command": f"py:{REFERENCE_SERVER}:build_server", "ablation": False, "call_timeout": 10.0}
    run = run_audit(
        scaled(profile_from_mapping(raw, source="test")),
        catalogue=catalogue,
        select=lambda spec: spec.family == FAMILY,
        generation=MATRIX_GENERATION,
    )
    assert next(c for c in run.controls if c.name == "approve").passed
    assert len(run.results) == len(VARIANTS)
    for result in run.results:
        assert result.verdict is NA, result.evidence
        assert result.reason.startswith("'delete_file' runs no command line")
        assert result.evidence == ()  # nothing was sent


# Each harmless command tried alone is one round trip, and one more when it asks (the person's no).
TRYING = ("setup: does ", "setup: the person declines it")


def transcripts(
    catalogue: Catalogue, raw: dict[str, Any], *, families: Sequence[str] | None = (FAMILY,)
) -> dict[str, tuple[Result, Transcript]]:
    """The families' attacks on run_command, in their order, each with the transcript it was judged on."""
    specs = [spec for spec in catalogue.active if families is None or spec.family in families]
    session = AuditSession(scaled(profile_from_mapping(raw, source="test")), catalogue, MATRIX_GENERATION)
    session.start(specs)
    try:
        return {spec.id: session.run(spec, "run_command") for spec in specs}
    finally:
        session.close()


def tried(transcript: Transcript) -> int:
    """The round trips an attack spent finding what the gate lets through."""
    return sum(e.phase is Phase.SETUP and e.label.startswith(TRYING) for e in transcript.exchanges)


def test_the_harmless_commands_are_tried_once_per_tool_and_the_other_attacks_read_what_was_found(
    catalogue: Catalogue,
) -> None:
    # Only pwd is let through: true, ls, echo and cat each ask and are declined (nine round trips).
    runs = transcripts(catalogue, shell_profile(allowed=["pwd"], style="every-part"))
    first, *others = runs
    assert tried(runs[first][1]) == len(HARMLESS) + 4, runs[first][0].evidence
    for attack_id in others:
        result, transcript = runs[attack_id]
        assert tried(transcript) == 0, result.evidence
        assert (
            f"the harmless commands were tried once for 'run_command' in this world (in {first}): "
            "let through unasked: 'pwd'"
        ) in transcript.notes
    # The verdicts are the ones each attack earned when it tried them itself: the whole line asked about.
    for attack_id, (result, _) in runs.items():
        expected = (NA, None) if attack_id == "MCA-CHAIN-003" else (R, Layer.TOOL)
        assert (result.verdict, result.layer) == expected, result.evidence


def test_a_fresh_world_tries_the_harmless_commands_again(catalogue: Catalogue) -> None:
    # Every attack in a world of its own: what the old process let through says nothing of the new one.
    raw = {**shell_profile(flaws=["prefix-allow-list"]), "isolation": "process"}
    runs = transcripts(catalogue, raw)
    for result, transcript in runs.values():
        assert tried(transcript) == len(HARMLESS) + 1, result.evidence  # only `true` asks
        assert not any("tried once" in note for note in transcript.notes), transcript.notes
        assert result.verdict is V, result.evidence


def test_a_tool_that_remembers_approvals_for_its_session_learns_none_of_the_harmless_commands_from_the_audit(
    catalogue: Catalogue,
) -> None:
    # The allow-list, learned once, could go stale only if an approval between two attacks let one of the
    # harmless commands through. The harness ticks "approve for this session" with every yes, and the
    # whole catalogue runs: every approval it gave is of the action's own line, none of a harmless one.
    raw = shell_profile(style="every-part", allowed=["pwd"], remember=True)
    runs = transcripts(catalogue, raw, families=None)
    remembered = [
        str(e.request["arguments"]["command"])
        for _, transcript in runs.values()
        for e in transcript.exchanges
        if any(
            isinstance(answer, dict) and (answer.get("content") or {}).get("remember") is True
            for answer in (e.request.get("inputResponses") or {}).values()
        )
    ]
    assert remembered, "no approval was remembered: the server under test learned nothing"
    harmless = {h.line for h in HARMLESS} | {h.failing for h in HARMLESS if h.failing}
    assert not harmless.intersection(remembered), sorted(set(remembered))
    # So the one allow-list read by all seven is what each would have found: only pwd, the line asked about.
    for attack_id, (result, _) in runs.items():
        if attack_id in VARIANTS:
            expected = (NA, None) if attack_id == "MCA-CHAIN-003" else (R, Layer.TOOL)
            assert (result.verdict, result.layer) == expected, result.evidence
