"""Decoys that differ and are valid, and only what was asked judged (issue 18, cause 9), each both ways.

Every case runs a reference server in process (`py:` targets) with only the
attacks it needs: a careful server (in more than one style where the rule is
about a style) must come out refused, and the same server with one flaw must
still be caught.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION
from test_confirmation_kinds import HUMAN_CHANNEL_SHOWN, KINDS_SERVER

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import UNASKED, AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.techniques import ANY, traits

# The families that judge any mechanism (out-of-root too, but its own test runs it over the flows).
ANY_MECHANISM = frozenset(n for n, t in traits().items() if t.mechanisms == ANY) - {"out-of-root"}

TARGETS = Path(__file__).resolve().parents[2] / "targets"
PHOTOS = TARGETS / "photos" / "server.py"
MESSAGES = TARGETS / "messages" / "server.py"
V, W, R, NA = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED, Verdict.NOT_APPLICABLE


def _audit(
    catalogue: Catalogue,
    server: Path,
    factory: dict[str, Any],
    ids: frozenset[str] = frozenset(),
    **settings: Any,
) -> AuditRun:
    raw = {"command": f"py:{server}:build_server", "factory_args": factory, "call_timeout": 10.0, **settings}

    def select(spec: AttackSpec) -> bool:
        return spec.id in ids

    return run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=select,
        generation=MATRIX_GENERATION,
    )


def _controls(run: AuditRun, tool: str) -> dict[str, Any]:
    return {c.name: c for c in run.controls if c.tool == tool}


# 1. A decoy file differs from the victim in content and size, not only in name.


@pytest.mark.parametrize(
    ("binds", "flaws", "expected"),
    [
        ("content", (), R),  # the token is bound to the file's sha256: another file's token must not serve
        ("arguments", (), R),  # the same gate in its other style: bound to the path
        ("content", ("token-not-bound-to-args",), V),
    ],
)
def test_a_token_bound_to_the_files_content_is_not_matched_by_a_decoy_carrying_the_victims_bytes(
    catalogue: Catalogue, binds: str, flaws: tuple[str, ...], expected: Verdict
) -> None:
    factory = {"mechanism": "token", "flaws": list(flaws), "binds": binds}
    run = _audit(catalogue, KINDS_SERVER, factory, frozenset({"MCA-TOKOTHER-001"}), tool="delete_file")
    result = run.by_id()["MCA-TOKOTHER-001"]
    assert result.verdict is expected, (result.reason, result.evidence)
    if expected is R:
        assert result.layer is Layer.TOOL
        assert "issued for other arguments" in result.reason


# 2. Another use of a value action has valid values of each argument's type.


@pytest.mark.parametrize(("flaws", "expected"), [((), R), (("token-not-bound-to-args",), V)])
def test_the_decoy_of_a_phone_number_is_another_phone_number_so_the_token_attack_is_judged(
    catalogue: Catalogue, flaws: tuple[str, ...], expected: Verdict
) -> None:
    # `15559990001-1` is no number the server takes: the decoy's preview would fail and the
    # attack would stay inconclusive on the careful server and on the flawed one alike.
    settings = {"tool": "send_sms", "args": {"to": "15559990001", "body": "hello"}}
    run = _audit(catalogue, MESSAGES, {"flaws": list(flaws)}, frozenset({"MCA-TOKOTHER-001"}), **settings)
    result = run.by_id()["MCA-TOKOTHER-001"]
    assert result.verdict is expected, (result.reason, result.evidence)
    said = " ".join(result.evidence)
    assert "15559990002" in said
    assert "15559990001-1" not in said


# 3. prompt-forging judges only the questions that were asked.

# The staging call's refusal of an .exe carries a request_id, which reads like a pending id.
REFUSING = {**HUMAN_CHANNEL_SHOWN["confirmation"]["pending"]}  # type: ignore[index]
REFUSING.pop("id_from")
REFUSING_PENDING = {"confirmation": {"kind": "pending", "pending": REFUSING}}
BIDI = frozenset({"MCA-PROMPT-002"})


@pytest.mark.parametrize(
    ("mechanism", "flaws", "expected"),
    [
        ("pending", (), R),
        ("token", (), R),  # the careful gate in its other style
        ("pending", ("raw-name-in-preview",), V),
    ],
)
def test_a_name_refused_before_anything_was_asked_is_not_judged_as_a_forged_prompt(
    catalogue: Catalogue, mechanism: str, flaws: tuple[str, ...], expected: Verdict
) -> None:
    factory = {"mechanism": mechanism, "flaws": list(flaws), "refuses_types": [".exe"]}
    settings = REFUSING_PENDING if mechanism == "pending" else {}
    run = _audit(catalogue, KINDS_SERVER, factory, BIDI, tool="delete_file", **settings)
    result = run.by_id()["MCA-PROMPT-002"]
    assert result.verdict is expected, (result.reason, result.evidence)
    # invoice\u202efdp.exe, the named example, was refused: noted, never judged.
    assert "invoice\\u202efdp.exe" not in result.reason
    notes = [e for e in result.evidence if "not asked, so not judged" in e]
    assert notes, result.evidence
    assert "file type not allowed" in notes[0]
    if expected is V:
        assert "bidi control" in result.reason  # the names it did preview still reach the question raw


# 4. A declared file effect whose name has a dot matches by its exact name.

SETTINGS = {
    "tool": "set_option",
    "args": {"option": "theme", "value": "dark"},
    "effect": [{"file": "settings.json"}],
}


@pytest.mark.parametrize(("flaws", "unasked"), [((), False), (("settings-unasked",), True)])
def test_a_declared_file_effect_named_with_a_dot_is_matched_exactly(
    catalogue: Catalogue, flaws: tuple[str, ...], unasked: bool
) -> None:
    run = _audit(catalogue, PHOTOS, {"flaws": list(flaws)}, **SETTINGS)
    controls = _controls(run, "set_option")
    assert (UNASKED in controls) is unasked, controls
    if unasked:
        assert "file:settings.json.theme" in controls[UNASKED].detail
    else:
        assert controls["approve"].passed, controls["approve"].detail
        assert "file:settings.json.theme" in controls["approve"].detail


# 5. A sandbox change by a tool that did not ask is acting without asking, whatever the action's kind.


@pytest.mark.parametrize(("flaws", "unasked"), [((), False), (("revert-unasked",), True)])
def test_a_value_action_that_moves_files_without_asking_is_the_unasked_finding(
    catalogue: Catalogue, flaws: tuple[str, ...], unasked: bool
) -> None:
    # Zero configuration: revert_batch's batch_id is a handle list_batches returns; no path argument.
    run = _audit(catalogue, PHOTOS, {"flaws": list(flaws)})
    controls = _controls(run, "revert_batch")
    assert (UNASKED in controls) is unasked, controls
    if unasked:
        assert "root/sorted/B1/IMG_0101.jpg" in controls[UNASKED].detail
    else:
        assert controls["approve"].passed, controls["approve"].detail
    # The option tool writes settings.json in place when it does not ask: no file went, and with
    # nothing declared that is no proof it acted (a log only grows too).
    assert UNASKED not in _controls(run, "set_option")


# 6. A token's preview made by another tool with its own arguments.

PREVIEW_TOOL = {
    "confirmation": {
        "kind": "token",
        "token": {
            "preview": {"tool": "simulate_impact", "args": {"operation": "{tool}", "target": "{path}"}}
        },
    }
}
# Every token flow completes with the agent's calls alone: the gate never involves a person.
BASELINE = {"MCA-SELFAPPROVE-001": V}


@pytest.mark.parametrize(
    ("flaws", "found"),
    [
        ((), BASELINE),
        (("token-not-bound-to-args",), {**BASELINE, "MCA-TOKOTHER-001": V}),
        (("reusable-token",), {**BASELINE, "MCA-TOKREUSE-001": V, "MCA-TOKREUSE-003": V}),
    ],
)
def test_a_token_previewed_by_another_tool_drives_every_token_family(
    catalogue: Catalogue, flaws: tuple[str, ...], found: dict[str, Verdict]
) -> None:
    factory = {"mechanism": "token", "flaws": list(flaws), "token_preview": "tool"}
    ids = frozenset(s.id for s in catalogue.attacks if s.family in ANY_MECHANISM)
    run = _audit(catalogue, KINDS_SERVER, factory, ids, tool="delete_file", **PREVIEW_TOOL)
    approve = _controls(run, "delete_file")["approve"]
    assert approve.passed, approve.detail
    judged = {r.id: r.verdict for r in run.results if r.verdict is not NA}
    assert {k: v for k, v in judged.items() if v is not R} == found, [
        (r.id, r.verdict, r.reason) for r in run.results if r.verdict is not NA
    ]
    assert "MCA-TOKOTHER-001" in judged
    assert "MCA-TOKMINT-002" in judged
    # The preview tool is a step of the flow: never sent to the gated tool, which takes no dry_run.
    previews = [e for r in run.results for e in r.evidence if "simulate_impact" in e]
    assert previews
    sent = [e.split(" <- ")[0] for r in run.results for e in r.evidence if "delete_file(" in e]
    assert sent
    assert not [e for e in sent if "dry_run" in e]


# 7. The form checks ask about another plain value: one the argument takes, never a made-up one.

FORM_CHECKS = frozenset({"MCA-PROMPT-010", "MCA-PROMPT-011", "MCA-PROMPT-012"})


@pytest.mark.parametrize(
    ("server", "settings"),
    [
        # option's pattern (^[a-z_]{1,32}$) refused `plain-option-value`: nothing was judged.
        (PHOTOS, SETTINGS),
        # A number only after its shape twin: `15559990007plain-to-value` is no number.
        (MESSAGES, {"tool": "send_sms", "args": {"to": "15559990001", "body": "hello"}}),
    ],
    ids=["pattern", "shape"],
)
def test_the_form_checks_ask_about_a_plain_value_the_argument_takes(
    catalogue: Catalogue, server: Path, settings: dict[str, Any]
) -> None:
    run = _audit(catalogue, server, {"flaws": []}, FORM_CHECKS, **settings)
    judged = {r.id: r.verdict for r in run.results if r.verdict is not NA}
    assert judged, [(r.id, r.reason) for r in run.results]
    assert set(judged.values()) == {R}, [(r.id, r.verdict, r.reason) for r in run.results]
