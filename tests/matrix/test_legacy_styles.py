"""The careful legacy server in other styles, on the elicitation driver: zero findings, and flaws still seen.

A style (targets/legacy/legacy_styles.py) changes what the harness must not lean
on: the form's shape (a choice, a typed name), the words of its refusals, whether
it raises them or returns a result with isError, a log file it keeps in the root.
Each careful style is audited over the whole catalogue on a 2025-11-25 connection
and must come out with no `vulnerable` and no `weak`, every family that runs over
the back channel refused for real; and a flaw in the same style is still caught,
so the zero is the server's doing and not the style hiding it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from baselined import assert_green_as_it_is
from conftest import MATRIX_GENERATION, Shared

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

LEGACY_SERVER = Path(__file__).resolve().parents[2] / "targets" / "legacy" / "server.py"
STYLES = ("enum-worded", "error-result", "logbook", "bare-accept")
# Every family the plain careful server is held to over the back channel (test_eras.py).
RAN_OVER_THE_BACK_CHANNEL = {
    "consent",
    "prompt-forging",
    "symlink-swap",
    "parent-swap",
    "identity-swap",
    "out-of-root",
    "double-spend",
    "capability-downgrade",
    "unanswered",
}


def audit(catalogue: Catalogue, style: str, *flaws: str, families: Sequence[str] | None = None) -> AuditRun:
    raw = {
        "command": f"py:{LEGACY_SERVER}:build_server",
        "factory_args": {"flaws": list(flaws), "answer_timeout": 2.0, "style": style},
        "tool": "delete_file",
        "call_timeout": 10.0,
        "protocol": "2025-11-25",
    }

    def select(spec: AttackSpec) -> bool:
        return families is None or spec.family in families

    profile = profile_from_mapping(raw, source="test")
    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


@pytest.fixture(scope="module")
def careful_in(catalogue: Catalogue, across_workers: Shared[AuditRun]) -> Callable[[str], AuditRun]:
    """A careful style's whole-catalogue audit, once (per run) for every test that reads it."""

    @cache
    def run(style: str) -> AuditRun:
        return across_workers(f"legacy-careful-{style}", lambda: audit(catalogue, style))

    return run


def _only(run: AuditRun, family: str) -> AuditRun:
    return replace(run, results=tuple(r for r in run.results if r.family == family))


@pytest.mark.parametrize("style", STYLES)
def test_each_careful_legacy_style_has_no_finding_over_the_back_channel(
    careful_in: Callable[[str], AuditRun], style: str
) -> None:
    run = careful_in(style)
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    found = [
        (r.id, r.verdict, r.reason) for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)
    ]
    assert found == []
    assert {r.mechanism for r in run.results} == {"elicitation"}
    refused = {r.family for r in run.results if r.verdict is Verdict.REFUSED}
    assert refused >= RAN_OVER_THE_BACK_CHANNEL
    assert {r.layer for r in run.results if r.verdict is Verdict.REFUSED} <= {Layer.TOOL, Layer.PROTOCOL}
    # Judged, not left open: a careful server the CI gate can hold green has no inconclusive result.
    unjudged = [(r.id, r.reason) for r in run.results if r.verdict is Verdict.INCONCLUSIVE]
    assert unjudged == []
    assert_green_as_it_is(run)


def test_the_logbook_style_s_log_is_learned_as_bookkeeping_and_left_out_by_name(
    careful_in: Callable[[str], AuditRun],
) -> None:
    run = _only(careful_in("logbook"), "consent")
    learned = next(c for c in run.controls if c.name == "bookkeeping")
    assert "root/legacy-audit.jsonl" in learned.detail
    decline = run.by_id()["MCA-CONSENT-001"]
    assert decline.verdict is Verdict.REFUSED
    assert "root/legacy-audit.jsonl" in decline.effect.ignored


def test_an_accept_with_no_content_is_the_yes_of_a_form_that_asks_nothing_but_never_of_a_decision_form(
    catalogue: Catalogue, careful_in: Callable[[str], AuditRun]
) -> None:
    # stocktrim-mcp-server 0.17.0 confirms with FastMCP's ctx.elicit(response_type=None): a form with no
    # field, whose accept is the person's yes. Acting on {"action": "accept", "content": null} there is
    # acting on that yes, not a bypass; on a form whose field decides, the same answer says nothing.
    bare = careful_in("bare-accept").by_id()["MCA-CONSENT-010"]
    assert bare.verdict is Verdict.NOT_APPLICABLE, bare.reason
    assert "no field that decides" in bare.reason
    decided = audit(catalogue, "plain", "accept-means-yes", families=("consent",)).by_id()["MCA-CONSENT-010"]
    assert decided.verdict is Verdict.VULNERABLE, decided.reason


# style -> the flaw, its family, and the attacks that must catch it in that style.
CAUGHT_IN_STYLE = {
    # A choice form read by truthiness: "false", "no" and 1 all delete.
    "enum-worded": (
        "truthy-strings",
        "consent",
        {"MCA-CONSENT-004": Verdict.VULNERABLE, "MCA-CONSENT-006": Verdict.VULNERABLE},
    ),
    # Refusals returned as isError results: the swap it no longer refuses is still an effect.
    "error-result": ("no-identity-check", "identity-swap", {"MCA-IDSWAP-001": Verdict.VULNERABLE}),
    # The log grows on every call: the deletion a decline made is not hidden among its lines.
    "logbook": (
        "decline-as-accept",
        "consent",
        {"MCA-CONSENT-001": Verdict.VULNERABLE, "MCA-CONSENT-002": Verdict.VULNERABLE},
    ),
    # A form with no field: the action is the whole answer, and a decline that acts is still caught.
    "bare-accept": (
        "decline-as-accept",
        "consent",
        {"MCA-CONSENT-001": Verdict.VULNERABLE, "MCA-CONSENT-002": Verdict.VULNERABLE},
    ),
}


@pytest.mark.parametrize("style", STYLES)
def test_a_flaw_is_still_caught_in_each_legacy_style(catalogue: Catalogue, style: str) -> None:
    flaw, family, expected = CAUGHT_IN_STYLE[style]
    run = audit(catalogue, style, flaw, families=(family,))
    results = run.by_id()
    for attack_id, verdict in expected.items():
        assert results[attack_id].verdict is verdict, (attack_id, results[attack_id].reason)
