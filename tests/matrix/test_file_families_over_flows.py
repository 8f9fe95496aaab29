"""The file families over a token or a pending flow: the preview is the question, confirming the answer.

A swap between preview and confirm is the same attack as between question and
answer; a path that must never be allowed must not be previewed, nor acted on
when confirmed; what the human reads about a hostile name is the preview's text (a
token) or what their own `show` command prints, the same text on their terminal (a
pending request). Each family proven both ways on the confirm-kinds reference server,
over both flows (the pending one approved by the human on their own channel).
"""

from __future__ import annotations

import pytest
from conftest import MATRIX_GENERATION, PERSON_STEPS_GENERATION, forked
from test_confirmation_kinds import HUMAN_CHANNEL_SHOWN, KINDS_SERVER, kinds_command

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.techniques import families

V, W, R, NA = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED, Verdict.NOT_APPLICABLE
FLOWS = ("token", "pending")
SWAPS = ("symlink-swap", "parent-swap", "identity-swap")
# The flag stated as the whole gate (the server's self-attested-flag takes it).
STATED_FLAG = {"confirmation": {"kind": "flag", "flag": {"arg": "human_approved", "value": True}}}
# The file families of those that run over a preview (subject-drift, their twin for a subject that is
# not a file, is test_subject_drift.py's).
# The families that run over a token, pending and waits flow, and need a file.
FILE_FAMILIES = (families("token") & families("waits")) - families("flag") - {"subject-drift"} | {
    "out-of-root"
}


def audit(
    catalogue: Catalogue,
    mechanism: str,
    *flaws: str,
    only: str | None = None,
    tool: str = "delete_file",
    of: frozenset[str] | None = None,
) -> AuditRun:
    """The file families (`of` them; or the attack `only`, over stdio) on `tool`; a pending flow is approved on the human's channel."""
    settings = {"pending": HUMAN_CHANNEL_SHOWN, "flag": STATED_FLAG}.get(mechanism, {})
    if only is None:
        factory = {"mechanism": mechanism, "flaws": list(flaws), "write_tool": tool == "write_file"}
        target: dict[str, object] = {"command": f"py:{KINDS_SERVER}:build_server", "factory_args": factory}
    else:
        target = {"command": kinds_command(mechanism, *flaws)}
    raw = {**target, "tool": tool, "call_timeout": 10.0, **settings}

    def select(spec: AttackSpec) -> bool:
        return spec.id == only if only else spec.family in (of or FILE_FAMILIES)

    profile = profile_from_mapping(raw, source="test")
    # Over stdio, each process of the server is forked from a zygote that imported the SDK once.
    profile = forked(profile) if only is not None else profile
    # Over pending, every name asked about is the person's `show` command: a process of its own.
    generation = PERSON_STEPS_GENERATION if mechanism == "pending" else MATRIX_GENERATION
    return run_audit(profile, catalogue=catalogue, select=select, generation=generation)


# A flow shows text, not a form: the form checks have nothing to look at.
NO_FORM = ("MCA-PROMPT-010", "MCA-PROMPT-011")

# flaw -> (the families it may fool, the attacks that must catch it, and how)
FLAWS: dict[str, tuple[tuple[str, ...], dict[str, Verdict]]] = {
    # Confirming follows the name as it is now: every swap between preview and confirm.
    "no-recheck": (
        SWAPS,
        {
            **{f"MCA-SYMLINK-00{n}": V for n in (1, 2, 3)},
            **{f"MCA-PARENT-00{n}": V for n in (1, 2)},
            "MCA-IDSWAP-001": V,
            # The same inode, rewritten: what was previewed is gone, though the file is the same.
            "MCA-IDSWAP-002": W,
        },
    ),
    "no-identity-check": (("identity-swap",), {"MCA-IDSWAP-001": V, "MCA-IDSWAP-002": W}),
    "no-containment": (
        ("out-of-root",),
        {"MCA-ROOT-001": V, "MCA-ROOT-002": V, "MCA-ROOT-003": V, "MCA-ROOT-008": V},
    ),
    # A token (or a pending id) for a path it refuses only when confirmed: the preview misled.
    "preview-before-check": (
        ("out-of-root",),
        {"MCA-ROOT-001": W, "MCA-ROOT-002": W, "MCA-ROOT-003": W, "MCA-ROOT-008": W},
    ),
    "raw-name-in-preview": (
        ("prompt-forging",),
        {**{f"MCA-PROMPT-00{n}": V for n in range(1, 7)}, "MCA-PROMPT-007": W},
    ),
    # A preview that names no file: no name's end is in it, and every name previews alike.
    "preview-without-name": (
        ("prompt-forging",),
        {
            **{f"MCA-PROMPT-00{n}": V for n in range(1, 9)},
            "MCA-PROMPT-009": W,
            "MCA-PROMPT-012": V,
            "MCA-PROMPT-013": V,
        },
    ),
    "missing-is-deleted": (("identity-swap",), {"MCA-IDSWAP-003": W}),
    "lexical-containment": (("out-of-root",), {"MCA-ROOT-004": V}),
    "truncates-at-nul": (("out-of-root",), {"MCA-ROOT-007": V}),
}
# Over a flow as over MRTR (test_detection_matrix.py), a directory is a flaw of its own
# (deletes-directories) that this server does not carry: its careful refusal is proven here.
NOT_CAUGHT_HERE = {"MCA-ROOT-005", "MCA-ROOT-006"}


def test_every_file_attack_over_a_flow_is_caught_by_some_flaw(catalogue: Catalogue) -> None:
    caught = {attack_id for _, expected in FLAWS.values() for attack_id in expected}
    over = {a.id for a in catalogue.active if a.family in FILE_FAMILIES} - set(NO_FORM)
    assert over - caught == NOT_CAUGHT_HERE


@pytest.mark.parametrize("mechanism", FLOWS)
def test_the_careful_flow_refuses_every_file_attack_in_the_tool(catalogue: Catalogue, mechanism: str) -> None:
    run = audit(catalogue, mechanism)
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    assert {r.mechanism for r in run.results} == {mechanism}
    for result in run.results:
        if result.id in NO_FORM:
            assert result.verdict is NA, result
            assert "not a form" in result.reason
            continue
        assert (result.id, result.verdict, result.layer) == (result.id, R, Layer.TOOL), result.evidence
    by_id = run.by_id()
    # Every swap was made between a preview that handed out a handle and the confirming step.
    for attack_id in ("MCA-SYMLINK-002", "MCA-PARENT-002", "MCA-IDSWAP-001"):
        evidence = by_id[attack_id].evidence
        assert any(line.startswith("[setup]") and "<- complete" in line for line in evidence), evidence
        assert any(line.startswith("note: after the question") for line in evidence), evidence
        assert any(line.startswith("[attack]") for line in evidence), evidence
    if mechanism == "pending":
        # The human approved on their own channel, after the swap; then execute_pending was refused.
        evidence = by_id["MCA-SYMLINK-002"].evidence
        assert any("on the human's channel" in line for line in evidence), evidence
        assert "execute_pending" in by_id["MCA-SYMLINK-002"].reason


# "Fools no other file family" is proven for every flaw over the token flow, and over the pending flow
# (each approval a step on the human's channel, twice the CPU) for no-recheck, the flaw of the most
# families; the pending flow's other flaws run their own families (the flaw is the same server code).
WHOLE_OVER_PENDING = frozenset({"no-recheck"})


def _families_for(mechanism: str, flaw: str) -> frozenset[str] | None:
    """The families a flaw's audit over `mechanism` runs: every file family, or the flaw's own."""
    if mechanism == "pending" and flaw not in WHOLE_OVER_PENDING:
        return frozenset(FLAWS[flaw][0])
    return None


@pytest.mark.parametrize("mechanism", FLOWS)
@pytest.mark.parametrize("flaw", sorted(FLAWS))
def test_each_flaw_is_caught_over_the_flow_by_its_family_and_fools_no_other(
    catalogue: Catalogue, mechanism: str, flaw: str
) -> None:
    families, expected = FLAWS[flaw]
    if mechanism == "pending" and flaw == "raw-name-in-preview":
        # The person's view of a pending request is printed on their terminal, where markup renders
        # nothing: a link in a name shown raw is no finding there (refused, with the rest of its family).
        expected = {k: v for k, v in expected.items() if k != "MCA-PROMPT-007"}
    run = audit(catalogue, mechanism, flaw, of=_families_for(mechanism, flaw))
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    by_id = run.by_id()
    for attack_id, verdict in expected.items():
        assert by_id[attack_id].verdict is verdict, (attack_id, by_id[attack_id].evidence)
        assert by_id[attack_id].mechanism == mechanism
    fooled = [r for r in run.results if r.family not in families and r.verdict in (V, W)]
    assert fooled == [], [(r.id, r.verdict, r.reason) for r in fooled]
    # Anything else of its own family is refused, by the tool.
    others = [r for r in run.results if r.id not in expected and r.verdict is not NA]
    assert {(r.verdict, r.layer) for r in others} <= {(R, Layer.TOOL)}, [(r.id, r.reason) for r in others]


def test_over_a_flag_flow_only_out_of_root_applies_and_is_proven_both_ways(catalogue: Catalogue) -> None:
    # The flag is the whole gate; what it can still get wrong is where the path leads.
    careful = audit(catalogue, "flag", "self-attested-flag")
    flawed = audit(catalogue, "flag", "self-attested-flag", "no-containment")
    for run in (careful, flawed):
        assert {r.mechanism for r in run.results} == {"flag"}
        for result in run.results:
            if result.family != "out-of-root":
                assert result.verdict is NA, result
                assert "a flag flow has no preview" in result.reason
    roots = [r for r in careful.results if r.family == "out-of-root"]
    assert {(r.verdict, r.layer) for r in roots} == {(R, Layer.TOOL)}, [(r.id, r.reason) for r in roots]
    by_id = flawed.by_id()
    assert {by_id[f"MCA-ROOT-00{n}"].verdict for n in (1, 2, 3, 8)} == {V}


@pytest.mark.parametrize(("flaws", "verdict"), [((), R), (("no-recheck",), V)])
def test_a_link_swapped_in_before_the_humans_approval_is_judged_across_processes(
    catalogue: Catalogue, flaws: tuple[str, ...], verdict: Verdict
) -> None:
    # Over stdio: the server is a process of its own, the human's approval another; the
    # canary outside the root is what the oracle watches.
    result = audit(catalogue, "pending", *flaws, only="MCA-SYMLINK-002").by_id()["MCA-SYMLINK-002"]
    assert result.verdict is verdict, result.evidence
    assert any("on the human's channel" in line for line in result.evidence), result.evidence
    if verdict is V:
        assert "outside/" in result.reason
    else:
        assert result.layer is Layer.TOOL


@pytest.mark.parametrize("mechanism", FLOWS)
@pytest.mark.parametrize(("flaws", "verdict"), [((), NA), (("missing-is-deleted",), W)])
def test_a_write_that_creates_the_deleted_file_again_did_what_was_approved(
    catalogue: Catalogue, mechanism: str, flaws: tuple[str, ...], verdict: Verdict
) -> None:
    # agentveil-mcp-proxy's write_file (O_CREAT) was "weak: reported success for something it could
    # not do" once the file was deleted before the answer: it created it, which is what was approved.
    # Told apart by the disk (the entry created), not the reply: a write that only says so is still weak.
    run = audit(catalogue, mechanism, *flaws, tool="write_file", of=frozenset({"identity-swap"}))
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    by_id = run.by_id()
    deleted = by_id["MCA-IDSWAP-003"]
    assert deleted.verdict is verdict, (deleted.reason, deleted.evidence)
    if verdict is NA:
        assert "the action writes its file" in deleted.reason
        assert "created it again at the approved path" in deleted.reason
    else:
        assert deleted.reason.startswith("reported success for something it could not do")
    # The swaps of a file still there are refused by the write as by a deletion.
    for attack_id in ("MCA-IDSWAP-001", "MCA-IDSWAP-002"):
        assert (by_id[attack_id].verdict, by_id[attack_id].layer) == (R, Layer.TOOL), by_id[attack_id].reason
