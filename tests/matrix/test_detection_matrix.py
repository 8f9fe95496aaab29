"""Every attack proven both ways on the reference server.

`vulnerable` (or `weak`) on a server with exactly that flaw, and no other
family fooled by it; `refused`, by the expected layer, on the careful server.

The careful server and the hostile modes run as real stdio subprocesses. Each flaw's server is
built in the audit's own process (`py:...:build_server`, its flaws given to its factory), as the
corpus's `py:` cases and test_eras.py's legacy server are: the real SDK and the real server code,
every family over the whole catalogue, at half the CPU of a process per world (the transports are
proven to give the same verdicts in test_transports.py). The corpus (`mcp-confirm-audit corpus`,
outside CI) audits every one of these flaws over stdio.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from baselined import assert_green_as_it_is, assert_green_with_its_findings_baselined
from conftest import REFERENCE_SERVER
from matrix_expectations import CAREFUL_LAYER, NOT_MRTR

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.cli.corpus import Case, load_manifest
from mcp_confirm_audit.engine.session import AuditRun
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.techniques import ANY, traits

# The families that judge any mechanism (out-of-root too, but its own test runs it over the flows).
ANY_MECHANISM = frozenset(n for n, t in traits().items() if t.mechanisms == ANY) - {"out-of-root"}

AuditFn = Callable[..., AuditRun]

V, W = Verdict.VULNERABLE, Verdict.WEAK
# A race the harness wins or loses: either way the flaw is found, with evidence.
V_OR_W = frozenset({V, W})

# Where one attack of a family is refused elsewhere: the SDK's typed params
# turn away an answer that is not an elicitation result before server code runs.
CAREFUL_LAYER_BY_ID = {"MCA-ROBUST-002": Layer.PROTOCOL}

# Attacks the careful server cannot even be asked: its state is sealed by the
# SDK, so there is nothing readable to edit (proven refused under --state signed);
# replicas and a shorter lifetime are not configured in this run (proven in
# test_state_in_depth.py), and each says how to configure them.
CAREFUL_NOT_APPLICABLE = {
    "MCA-FORGE-020": "the state is opaque",
    **{f"MCA-REPLICA-00{n}": "--mcp-replicas 2" for n in range(1, 6)},
    "MCA-EXPIRY-001": "set ttl_flag",
    # A second identity needs HTTP and tokens: proven in test_cross_principal.py.
    **{f"MCA-XPRINCIPAL-00{n}": "principals:" for n in range(1, 5)},
    **NOT_MRTR,
}

# The manifest of the corpus is the one place a flaw's expectation is written: the families it may
# fool and the verdict each listed attack must give. The matrix runs its cases for the servers it
# starts: the reference server with one flaw (`--flaw NAME`, with `--second-tool` where the flaw needs
# one), its careful twin, and the hostile server in one mode.
MANIFEST = load_manifest(Path(__file__).resolve().parents[2] / "targets" / "corpus" / "corpus.yaml")
Expected = dict[str, Verdict | frozenset[Verdict]]


def _expected(case: Case) -> Expected:
    return {
        attack: Verdict(verdicts[0]) if len(verdicts) == 1 else frozenset(map(Verdict, verdicts))
        for attack, verdicts in case.expect.items()
    }


def _flaw_alone(case: Case) -> str | None:
    """The flaw a case of the reference server runs with alone (no style, no settings), or None."""
    if case.server != "reference" or case.settings or case.flags[:1] != ["--flaw"]:
        return None
    return case.flags[1] if case.flags[2:] in ([], ["--second-tool"]) else None


_ALONE = [(flaw, case) for case in MANIFEST.cases if (flaw := _flaw_alone(case))]
# flaw -> (the families it may fool, the attacks that must catch it, and how)
FLAWS: dict[str, tuple[tuple[str, ...], Expected]] = {
    flaw: (tuple(case.families or ()), _expected(case)) for flaw, case in _ALONE if not case.careful
}
# The command line of each flaw's server (the other-tool attack needs a second destructive tool).
OPTIONS = {flaw: tuple(case.flags) for flaw, case in _ALONE}
# A weaker defence that is careful in the families it names (its twin holds alone).
CAREFUL_WITH = {flaw: tuple(case.families or ()) for flaw, case in _ALONE if case.careful}
CAREFUL_OPTIONS = tuple(next(c for c in MANIFEST.cases if c.id == "reference/careful").flags)

# What no flag of the careful server can remove is its ability to keep
# answering: the hostile server (targets/hostile) is the careful one with one
# misbehaviour. A reliable hang or crash is weak (see attacks/robustness.yaml).
# mode -> (its family, the attacks that must catch it, and how)
HOSTILE: dict[str, tuple[str, Expected]] = {
    case.flags[1]: (family, _expected(case))
    for case in MANIFEST.cases
    if case.server == "hostile" and case.flags[:1] == ["--mode"]
    for family in case.families or ()
}


# Families that need replicas or a shorter lifetime: proven in test_state_in_depth.py; and the
# families of confirmations that are not MRTR: proven in test_confirmation_kinds.py; the families of a
# server that asks over the back channel, or in two eras: proven in test_eras.py; URL-mode elicitation's
# families need a page to open: proven in test_url_mode.py; subject-drift needs an action that names
# no file and a drift: call: proven in test_subject_drift.py.
URL_MODE = ("url-user-data", "url-preauthenticated", "url-consent", "url-identity", "url-abandoned")
CONFIGURED_ELSEWHERE = (
    "cross-replica",
    "expiry",
    "cross-principal",
    "unanswered",
    "protocol-downgrade",
    "subject-drift",
    # A pending flow with a lifetime: tests/matrix/test_lapsed_request.py.
    "lapsed-request",
    *sorted(ANY_MECHANISM),
    *URL_MODE,
)


# The reference server built in the audit's process: `build_server(root, **factory_args)`.
IN_PROCESS = f"py:{REFERENCE_SERVER}:build_server"
# A command line's options, as its factory's arguments (the options the matrices' flaws are run with).
_SWITCHES = {"--second-tool": "second_tool"}
_VALUES = {"--style": "style", "--state": "state"}


def in_process(options: Sequence[str]) -> dict[str, Any]:
    """`audit_reference` settings building the server `options` start, in the audit's own process.

    No ablation: the stdio audits it stands for have none (test_transports.py runs it).
    """
    factory: dict[str, Any] = {"flaws": []}
    words = iter(options)
    for word in words:
        if word == "--flaw":
            factory["flaws"].append(next(words))
        elif word in _SWITCHES:
            factory[_SWITCHES[word]] = True
        elif word in _VALUES:
            factory[_VALUES[word]] = next(words)
        else:
            raise ValueError(f"{word!r}: no factory argument for it; run that case over stdio")
    return {"command": IN_PROCESS, "factory_args": factory, "ablation": False}


def test_every_active_attack_is_caught_by_some_flaw(catalogue: Catalogue) -> None:
    caught = {attack_id for _, expected in [*FLAWS.values(), *HOSTILE.values()] for attack_id in expected}
    here = {a.id for a in catalogue.active if a.family not in CONFIGURED_ELSEWHERE}
    assert here - caught == set()


def test_the_careful_server_passes_its_controls_and_refuses_every_attack_at_the_expected_layer(
    audit_reference: AuditFn,
) -> None:
    run = audit_reference(*CAREFUL_OPTIONS)
    assert all(c.passed for c in run.controls), run.controls
    for result in run.results:
        if result.id in CAREFUL_NOT_APPLICABLE:
            assert result.verdict is Verdict.NOT_APPLICABLE, result
            assert CAREFUL_NOT_APPLICABLE[result.id] in result.reason
            continue
        assert (result.id, result.verdict, result.layer) == (
            result.id,
            Verdict.REFUSED,
            CAREFUL_LAYER_BY_ID.get(result.id, CAREFUL_LAYER[result.family]),
        ), result.evidence
    assert_green_as_it_is(run)


def test_a_careful_server_with_a_readable_signed_state_refuses_its_edit_in_the_tool(
    audit_reference: AuditFn,
) -> None:
    run = audit_reference(**in_process(["--state", "signed", "--second-tool"]))
    assert all(c.passed for c in run.controls), run.controls
    by_id = run.by_id()
    assert (by_id["MCA-FORGE-020"].verdict, by_id["MCA-FORGE-020"].layer) == (Verdict.REFUSED, Layer.TOOL)
    # Mutations of the SDK's version prefix have nothing to act on in this format.
    prefix_only = {"MCA-FORGE-015", "MCA-FORGE-016"}
    judged_here = [r for r in run.results if r.id not in prefix_only and r.family not in CONFIGURED_ELSEWHERE]
    assert {r.verdict for r in judged_here} == {Verdict.REFUSED}
    # Without the SDK's boundary, the server's own checks are the ones that hold.
    judged = [r for r in judged_here if r.family in ("forged-state", "cross-target")]
    assert {r.layer for r in judged} == {Layer.TOOL}


@pytest.mark.parametrize("flaw", sorted(FLAWS))
def test_each_flaw_is_caught_by_its_family_and_fools_no_other(
    audit_reference: AuditFn, catalogue: Catalogue, flaw: str
) -> None:
    families, expected = FLAWS[flaw]
    run = audit_reference(**in_process(OPTIONS[flaw]))
    assert_caught_and_nothing_else(run, families, expected)
    # The same run, gated by a baseline of its own findings, exits 0.
    assert_green_with_its_findings_baselined(run, catalogue)


def assert_caught_and_nothing_else(
    run: AuditRun, families: str | tuple[str, ...], expected: dict[str, Verdict | frozenset[Verdict]]
) -> None:
    families = (families,) if isinstance(families, str) else families
    assert next(c for c in run.controls if c.name == "approve").passed
    by_id = run.by_id()
    for attack_id, verdict in expected.items():
        allowed = verdict if isinstance(verdict, frozenset) else {verdict}
        assert by_id[attack_id].verdict in allowed, by_id[attack_id].evidence
    fooled = [r for r in run.results if r.family not in families and r.verdict in (V, W)]
    assert fooled == [], [(r.id, r.verdict, r.reason) for r in fooled]


@pytest.mark.parametrize("mode", sorted(HOSTILE))
def test_each_hostile_mode_is_caught_by_its_family_and_fools_no_other(
    audit_hostile: AuditFn, catalogue: Catalogue, mode: str
) -> None:
    family, expected = HOSTILE[mode]
    run = audit_hostile(mode)
    assert next(c for c in run.controls if c.name == "approve").passed
    by_id = run.by_id()
    for attack_id, verdict in expected.items():
        assert by_id[attack_id].verdict is verdict, by_id[attack_id].evidence
        assert by_id[attack_id].layer is Layer.TRANSPORT
        # The second process is named in the evidence: the input was tried twice.
        assert sum("-> delete_file" in line and "[attack]" in line for line in by_id[attack_id].evidence) >= 2
    fooled = [r for r in run.results if r.family != family and r.verdict in (V, W)]
    assert fooled == [], [(r.id, r.verdict, r.reason) for r in fooled]
    assert_green_with_its_findings_baselined(run, catalogue)


@pytest.mark.parametrize("flaw", sorted(CAREFUL_WITH))
def test_a_weaker_link_check_alone_still_refuses_every_swap_by_the_identity_re_check(
    audit_reference: AuditFn, flaw: str
) -> None:
    # Defence in depth: the file's identity, compared after the answer, holds on its own.
    run = audit_reference(**in_process(OPTIONS[flaw]), families=CAREFUL_WITH[flaw])
    assert {(r.verdict, r.layer) for r in run.results} == {(Verdict.REFUSED, Layer.TOOL)}, [
        (r.id, r.reason) for r in run.results
    ]
