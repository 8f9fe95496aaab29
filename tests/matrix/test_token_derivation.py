"""token-forgery both ways: a deterministic token is weak, a derivable one vulnerable only when it acts.

The confirm-kinds server (a file deleted behind a token) and the robot arm (a
move seen only through `arm_status`), in-process, with every family that judges
a token flow: a token that is a hash of the arguments (`predictable-token`: sha256
of their JSON; `pipe-joined-token`: sha1 of their '|'-joined values, base64) is
forged for a use nobody previewed and acts; a keyed token with no nonce
(`deterministic-keyed-token`) is the same for the same call but cannot be made,
so it is only weak, as is a computable token the server takes only once it issued it
(`predictable-issued-token`); random tokens and nonced HMAC tokens are refused.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.techniques import ANY, traits

# The families that judge any mechanism (out-of-root too, but its own test runs it over the flows).
ANY_MECHANISM = frozenset(n for n, t in traits().items() if t.mechanisms == ANY) - {"out-of-root"}

TARGETS = Path(__file__).resolve().parents[2] / "targets"
KINDS = TARGETS / "confirm_kinds" / "server.py"
ARM = TARGETS / "robot_arm" / "server.py"
V, W, R = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED
DERIVED = "MCA-TOKMINT-002"
# Every token flow completes with the agent's calls alone: the gate never involves a person.
BASELINE = {"MCA-SELFAPPROVE-001": V}

# case -> (flaw, token scheme, what MCA-TOKMINT-002 must be, what its reason must say)
CASES: dict[str, tuple[str | None, str, Verdict, str]] = {
    "random tokens": (None, "random", R, "unknown confirm_token"),
    "nonced hmac tokens": (None, "hmac", R, "unknown confirm_token"),
    "predictable-token": (
        "predictable-token",
        "random",
        V,
        "a token forged as sha256 over sorted JSON, hex, first 16 chars of its arguments, for a use nobody previewed, "
        "confirmed the action",
    ),
    # Computable, but only a token a preview issued is taken: the forged one does not act.
    "predictable-issued-token": (
        "predictable-issued-token",
        "random",
        W,
        "; sha256 over sorted JSON, hex, first 16 chars of them reproduces it",
    ),
    "pipe-joined-token": (
        "pipe-joined-token",
        "random",
        V,
        # A cut with no '+', '/', '-' or '_' in it is both kinds of base64, and named as plain base64.
        "base64, first 20 chars of its arguments, for a use nobody previewed, confirmed the action",
    ),
    "deterministic-keyed-token": (
        "deterministic-keyed-token",
        "random",
        W,
        "the token is deterministic: two previews of the same arguments",
    ),
    # The server fills in the optional reason the call left out ("routine cleanup") before hashing.
    "random tokens with an optional reason": (None, "random", R, "unknown confirm_token"),
    "defaults-filled-token": (
        "defaults-filled-token",
        "random",
        V,
        "sha256 over compact sorted JSON, hex, first 32 chars of its arguments with the schema's defaults "
        "filled in, for a use nobody previewed, confirmed the action",
    ),
    # The path beside a value the server derives itself: the file's sha256.
    "file-hash-joined-token": (
        "file-hash-joined-token",
        "random",
        V,
        "sha256 over '|'-joined values (in argument order), hex, first 24 chars of its arguments and the "
        "file's sha256, for a use nobody previewed, confirmed the action",
    ),
}
# The token tools that take an optional reason, which the server fills in (confirm_kinds --binds reason).
WITH_A_REASON = {"random tokens with an optional reason", "defaults-filled-token"}
# The arm takes no token scheme: its careful tokens are random; the derivations it shares with the file
# server are the first three.
ARM_CASES = [
    case
    for case, (flaw, scheme, *_) in CASES.items()
    if scheme == "random" and case not in WITH_A_REASON and flaw != "file-hash-joined-token"
]


def _audit(
    catalogue: Catalogue, server: Path, flaw: str | None, scheme: str, binds: str | None = None
) -> AuditRun:
    factory: dict[str, object] = {"mechanism": "token", "flaws": [flaw] if flaw else []}
    if scheme != "random":
        factory["token_scheme"] = scheme
    if binds is not None:
        factory["binds"] = binds
    tool = "move_joint" if server == ARM else "delete_file"
    raw = {
        "command": f"py:{server}:build_server",
        "factory_args": factory,
        "tool": tool,
        "call_timeout": 10.0,
    }

    def select(spec: AttackSpec) -> bool:
        return spec.family in ANY_MECHANISM

    profile = profile_from_mapping(raw, source="test")
    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def _judged(catalogue: Catalogue, server: Path, case: str) -> Result:
    """The derived-token attack's result; every other family as on any careful token server."""
    flaw, scheme, verdict, said = CASES[case]
    run = _audit(catalogue, server, flaw, scheme, "reason" if case in WITH_A_REASON else None)
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    expected = {**BASELINE, DERIVED: verdict}
    for result in run.results:
        if result.id in expected:
            assert result.verdict is expected[result.id], (result.id, result.reason, result.evidence)
        elif result.verdict is not Verdict.NOT_APPLICABLE:
            assert (result.id, result.verdict, result.layer) == (result.id, R, Layer.TOOL), result.evidence
    derived = run.by_id()[DERIVED]
    assert said in derived.reason, derived.reason
    # Beside each forged token, its twin: the decoy's own token, taken by the gate before the attack.
    for forged in (run.by_id()["MCA-TOKMINT-001"], derived):
        assert any(
            line.startswith("benign twin") and "was taken by the gate" in line for line in forged.evidence
        ), forged.evidence
    return derived


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_token_is_forged_only_when_derivable_and_deterministic_alone_is_weak(
    catalogue: Catalogue, case: str
) -> None:
    derived = _judged(catalogue, KINDS, case)
    _, _, verdict, _ = CASES[case]
    # Vulnerable only from the effect of the forged redemption: the victim file, gone.
    assert derived.effect.happened is (verdict is V), derived.effect
    if verdict is V:
        # The victim's file, or the use made for the forger: never the decoy that was previewed.
        assert derived.effect.removed, derived.effect
        assert not any("decoy" in p for p in derived.effect.removed), derived.effect
    if case == "pipe-joined-token":
        # One argument: its order is the sorted one, and the search names the order it tries first.
        assert "sha1 over '|'-joined values (in argument order)" in derived.reason, derived.reason
    deterministic = [line for line in derived.evidence if "the token is deterministic" in line]
    if verdict is R:
        assert deterministic == [], derived.evidence
    else:
        # The evidence: both previews of the same arguments, and the one token they returned.
        (line,) = deterministic
        token = re.search(r'both returned confirm_token "([^"]+)"', line)
        assert token is not None, line
        shown = [e for e in derived.evidence if token.group(1) in e and "deterministic" not in e]
        assert len(shown) >= 2, derived.evidence


@pytest.mark.parametrize("case", ARM_CASES)
def test_the_same_tokens_are_judged_alike_on_an_action_that_names_no_file(
    catalogue: Catalogue, case: str
) -> None:
    # Two arguments (joint, degrees): the '|'-joined values are sorted by name, and the arm's
    # moves are seen through its read-only status tool.
    derived = _judged(catalogue, ARM, case)
    _, _, verdict, _ = CASES[case]
    assert bool(derived.effect.observed) is (verdict is V), derived.effect
    if case == "pipe-joined-token":
        assert "sha1 over '|'-joined values (sorted by name)" in derived.reason, derived.reason
