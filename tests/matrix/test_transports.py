"""One catalogue, three ways to reach the target, the same verdicts; and layer ablation in-process.

Over stdio (a subprocess), over Streamable HTTP (a subprocess the harness
starts on a free loopback port) and in-process (`Client(server)`, the full
middleware chain), the careful server must be judged identically: every
family runs, replicas and a short lifetime included, and over HTTP (where it
wants a bearer token) another identity too.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Shared
from identities import BEARER, as_alice
from matrix_expectations import CAREFUL_LAYER, NOT_MRTR

from mcp_confirm_audit.engine.session import AuditRun
from mcp_confirm_audit.models import Layer, Verdict

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
# The reference server built in the test process: `build_server(root, **factory_args)`.
IN_PROCESS = f"py:{SERVER}:build_server"


def reference_command(*options: str) -> str:
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


AuditFn = Callable[..., AuditRun]

EVERYTHING = {"replicas": 2, "ttl": 1.0}
TRANSPORTS = {
    "stdio": {"command": reference_command("--second-tool"), "ttl_flag": "--ttl-seconds {ttl}"},
    "http": {
        "command": reference_command("--second-tool", *BEARER),
        "ttl_flag": "--ttl-seconds {ttl}",
        **as_alice(),
    },
    "in-process": {
        "command": IN_PROCESS,
        "factory_args": {"second_tool": True},
        "ttl_flag": "ttl_seconds={ttl}",
    },
}


EXCEPTIONS: dict[str, tuple[Verdict, Layer | None]] = {
    "MCA-FORGE-020": (Verdict.NOT_APPLICABLE, None),  # the state is opaque: nothing to edit
    "MCA-REPLICA-005": (
        Verdict.REFUSED,
        Layer.TOOL,
    ),  # one replica acts once, its own ledger refuses the rest
    # The SDK's typed params turn away an answer that is not an elicitation result.
    "MCA-ROBUST-002": (Verdict.REFUSED, Layer.PROTOCOL),
    # Families of confirmations that are not MRTR.
    **dict.fromkeys(NOT_MRTR, (Verdict.NOT_APPLICABLE, None)),
}


@pytest.fixture(scope="module")
def over(audit_reference: AuditFn, across_workers: Shared[AuditRun]) -> Callable[[str], AuditRun]:
    """The careful server's whole catalogue over one transport, audited once in the run (on any worker)."""

    def run(transport: str) -> AuditRun:
        # Over HTTP every process is started as the profile says, its own interpreter importing the
        # SDK: the start every user gets by default (a zygote forks stdio targets only, as the rest
        # of the matrix and the stdio case here start them).
        return across_workers(
            f"transports-{transport}", lambda: audit_reference(**TRANSPORTS[transport], **EVERYTHING)
        )

    return run


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
def test_the_careful_server_gets_the_same_verdicts_over_stdio_http_and_in_process(
    over: Callable[[str], AuditRun], transport: str
) -> None:
    run = over(transport)
    assert all(c.passed for c in run.controls), run.controls
    # Another identity is a set of HTTP headers: there is none over a pipe or in-process.
    elsewhere = {} if transport == "http" else {"cross-principal": (Verdict.NOT_APPLICABLE, None)}
    got = {r.id: (r.verdict, r.layer) for r in run.results}
    expected = {
        r.id: EXCEPTIONS[r.id]
        if r.id in EXCEPTIONS
        else elsewhere[r.family]
        if r.family in elsewhere
        else (Verdict.REFUSED, CAREFUL_LAYER[r.family])
        for r in run.results
    }
    assert got == expected, [
        (r.id, r.verdict.value, r.reason) for r in run.results if got[r.id] != expected[r.id]
    ]
    # Every family was judged (none skipped), so every family ran over this transport.
    assert {r.family for r in run.results if r.verdict is Verdict.REFUSED} == set(CAREFUL_LAYER) - set(
        elsewhere
    )


def test_ablation_runs_only_in_process_and_only_for_what_the_boundary_refused(
    audit_reference: AuditFn, over: Callable[[str], AuditRun]
) -> None:
    # The whole catalogue in process (replicas and a short lifetime included), read from the audit above.
    in_process = over("in-process")
    assert any(r.ablation is not None for r in in_process.results)
    for result in in_process.results:
        by_boundary = result.verdict is Verdict.REFUSED and result.layer is Layer.SDK_BOUNDARY
        assert (result.ablation is not None) == by_boundary, result.id
    stdio = audit_reference("--second-tool", families=["cross-target"])
    assert all(r.ablation is None for r in stdio.results)
    switched_off = audit_reference(command=IN_PROCESS, ablation=False, families=["cross-target"])
    assert all(r.ablation is None for r in switched_off.results)
    # The boundary refused them, so ablation would have run them again.
    assert any(r.layer is Layer.SDK_BOUNDARY for r in switched_off.results)


def test_ablation_shows_which_layers_refuse_cross_target_and_forged_states_on_their_own(
    audit_reference: AuditFn,
) -> None:
    run = audit_reference(
        command=IN_PROCESS, factory_args={"second_tool": True}, families=["cross-target", "forged-state"]
    )
    alone = {r.id: r.ablation.refused_alone_by for r in run.results if r.ablation is not None}
    boundary, tool = Layer.SDK_BOUNDARY, Layer.TOOL
    # The sealed state names its file, so the tool refuses another file itself...
    assert alone["MCA-XTARGET-001"] == (boundary, tool)
    # ...but not an added argument or another tool: only the SDK binds those.
    for attack_id in ("MCA-XTARGET-002", "MCA-XTARGET-003", "MCA-XTARGET-004"):
        assert alone[attack_id] == (boundary,), attack_id
    # A forged nonce is unknown to the ledger, so forgeries meet the tool too.
    for attack_id in ("MCA-FORGE-001", "MCA-FORGE-004", "MCA-FORGE-006", "MCA-FORGE-011"):
        assert alone[attack_id] == (boundary, tool), attack_id


def test_ablation_exposes_a_hand_rolled_signer_that_duplicates_the_boundary(audit_reference: AuditFn) -> None:
    # mcp-confirm 0.1.0's design: its own HMAC-signed state inside the SDK's seal.
    run = audit_reference(
        command=IN_PROCESS,
        factory_args={"second_tool": True, "state": "signed-and-sealed"},
        families=["cross-target", "forged-state"],
    )
    ablated = [r for r in run.results if r.ablation is not None]
    assert len(ablated) >= 20
    judged = [r.ablation for r in ablated if r.ablation.verdict is not Verdict.NOT_APPLICABLE]
    # Everything the boundary refuses, the signer refuses again: the boundary is
    # redundant here, which is to say the signer is.
    assert {a.removed_guard for a in judged} == {"redundant"}
    assert {a.refused_alone_by for a in judged} == {(Layer.SDK_BOUNDARY, Layer.TOOL)}
    assert {r.family for r in ablated} == {"cross-target", "forged-state"}


@pytest.mark.parametrize("state", ["sealed", "signed-and-sealed"])
def test_an_ablated_run_proves_its_honest_flow_first(audit_reference: AuditFn, state: str) -> None:
    run = audit_reference(command=IN_PROCESS, factory_args={"state": state}, families=["forged-state"])
    assert all(r.ablation is None or r.ablation.verdict is not Verdict.INCONCLUSIVE for r in run.results)
