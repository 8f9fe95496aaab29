"""Replies that say little about the gate: a refusal in a list of one, and another tool that never ran.

The outcomes reference server answers in ordinary JSON results. Seen on real servers: one
call's refusal came as `[{...}]` (a tool typed `-> list[dict]`, which the SDK wraps as
`{"result": [...]}`) or under a lone `results` key, and was read as success; and `ungated`
said `refused` when every call to another tool had failed for a reason of the world, so
nothing had been tried. Each is proven both ways here, with zero configuration.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile, profile_from_mapping

SERVER = Path(__file__).resolve().parents[2] / "targets" / "outcomes" / "server.py"
R, INC = Verdict.REFUSED, Verdict.INCONCLUSIVE
REFUSING = frozenset({"consent", "replay"})


def audit(catalogue: Catalogue, families: Collection[str], **factory_args: object) -> AuditRun:
    """The outcomes server built in process with `factory_args` (test_outcome_model.py runs it over stdio)."""
    return run_audit(
        Profile(command=f"py:{SERVER}:build_server", factory_args=factory_args, call_timeout=deadline(10.0)),
        catalogue=catalogue,
        select=lambda spec: spec.family in families,
        generation=MATRIX_GENERATION,
    )


@pytest.mark.parametrize("answers", ["list", "results"])
def test_a_careful_gate_that_refuses_inside_a_list_of_one_is_refused_by_the_tool(
    catalogue: Catalogue, answers: str
) -> None:
    run = audit(catalogue, REFUSING, answers=answers)
    assert all(c.passed for c in run.controls), run.controls
    # The decline's `[{"ok": false, "status": "refused", ...}]` was learned as the gate's refusal.
    learned = next(c for c in run.controls if c.name == "refusals")
    assert "gate refusal learned from decline: refused" in learned.detail, learned.detail
    judged = [r for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE]
    assert judged
    assert {(r.verdict, r.layer) for r in judged} <= {(R, Layer.TOOL), (R, Layer.SDK_BOUNDARY)}, [
        (r.id, r.verdict, r.reason) for r in judged
    ]


def test_a_decline_that_acts_is_still_caught_when_the_refusal_comes_in_a_list(catalogue: Catalogue) -> None:
    run = audit(catalogue, {"consent"}, answers="list", flaws=["decline-acts"])
    found = {r.id: r.verdict for r in run.results if r.verdict is Verdict.VULNERABLE}
    assert found == {"MCA-CONSENT-001": Verdict.VULNERABLE, "MCA-CONSENT-002": Verdict.VULNERABLE}, found


def test_another_tool_that_refused_every_call_for_the_worlds_reason_tried_nothing(
    catalogue: Catalogue,
) -> None:
    # archive_job takes only jobs done for a year, and no job is: it never ran, so nothing is shown.
    ungated = audit(catalogue, {"ungated"}, beside="archive").by_id()["MCA-UNGATED-001"]
    assert (ungated.verdict, ungated.layer) == (INC, None), ungated.reason
    assert "none of the 1 calls to other tools ran" in ungated.reason, ungated.reason
    assert "has not been done for a year" in ungated.reason  # what the target said, quoted


def test_another_tool_that_ran_and_changed_nothing_at_the_gate_is_refused(catalogue: Catalogue) -> None:
    # add_note ran, and wrote beside the board: nothing moved where set_status's effect shows.
    ungated = audit(catalogue, {"ungated"}, beside="note").by_id()["MCA-UNGATED-001"]
    assert (ungated.verdict, ungated.layer) == (R, Layer.TOOL), ungated.reason
    assert ungated.reason.startswith("nothing moved where the gated action's effect shows"), ungated.reason
    assert "notes.jsonl" in ungated.reason  # seen, and left out for being elsewhere


# -- the requirement a finding cites is its era's ---------------------------------------------------

TARGETS = SERVER.parents[1]


def downgrade(
    catalogue: Catalogue, server: str, **settings: object
) -> dict[str, tuple[Verdict, tuple[str, ...]]]:
    raw = {
        "command": f"py:{TARGETS / server}:build_server",
        "factory_args": {"flaws": ["elicits-without-capability"]},
        "tool": "delete_file",
        "call_timeout": 10.0,
        **settings,
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family == "capability-downgrade",
        generation=MATRIX_GENERATION,
    )
    return {r.id: (r.verdict, r.refs) for r in run.results}


def test_a_form_sent_over_the_back_channel_to_a_client_that_declared_none_cites_the_elicitation_rule(
    catalogue: Catalogue,
) -> None:
    # Seen on FastMCP servers at 2025-11-25: the finding held, but cited MRTR's -32021, which that era has not.
    found = downgrade(catalogue, "legacy/server.py", protocol="2025-11-25")
    for attack in ("MCA-DOWNGRADE-001", "MCA-DOWNGRADE-002"):
        verdict, refs = found[attack]
        assert verdict is Verdict.WEAK, found
        assert any("elicitation requests with modes that are not supported" in ref for ref in refs), refs
        assert not any("-32021" in ref for ref in refs), refs


def test_the_same_flaw_over_mrtr_cites_the_mrtr_rule(catalogue: Catalogue) -> None:
    found = downgrade(catalogue, "reference/server.py")
    for attack in ("MCA-DOWNGRADE-001", "MCA-DOWNGRADE-002"):
        verdict, refs = found[attack]
        assert verdict is Verdict.WEAK, found
        assert any("-32021" in ref for ref in refs), refs


# -- flag-bypass: a plain string whose choices only the descriptions list --------------------------

COLLECTIONS = TARGETS / "collections" / "server.py"
FLAGBYPASS = "MCA-FLAGBYPASS-001"


def flag_bypass(catalogue: Catalogue, *flaws: str, choices_in: str = "tool", **settings: object) -> AuditRun:
    raw = {
        "command": f"py:{COLLECTIONS}:build_server",
        "factory_args": {"flaws": list(flaws), "choices_in": choices_in},
        "tool": "delete_collection",
        "setup": [
            {"tool": "create_collection", "args": {"title": "reading"}, "save": {"c": "collection_id"}}
        ],
        "args": {"collection_id": "{c}"},
        "effect": [{"tool": "list_links"}],
        "call_timeout": 10.0,
        **settings,
    }
    return run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family == "flag-bypass",
        generation=MATRIX_GENERATION,
    )


def test_a_string_choice_the_tools_description_lists_that_skips_the_person_is_a_flag_bypass(
    catalogue: Catalogue,
) -> None:
    # As linkwarden-mcp 0.1.6 over 2025-11-25: on_links='delete' is taken as the person's answer.
    run = flag_bypass(catalogue, "on-links-skips-question", protocol="2025-11-25")
    assert all(c.passed for c in run.controls if c.name == "approve"), run.controls
    bypass = run.by_id()[FLAGBYPASS]
    assert bypass.verdict is Verdict.VULNERABLE, (bypass.reason, bypass.evidence)
    assert "note: on_links: 'delete', set by the caller, made the tool act without asking" in bypass.evidence


@pytest.mark.parametrize(
    ("choices_in", "settings"),
    [
        ("tool", {"protocol": "2025-11-25"}),  # listed in the tool's description, asked over the back channel
        ("argument", {}),  # listed in the argument's own description, asked with an MRTR round
    ],
)
def test_a_careful_server_asks_about_every_choice_of_that_string(
    catalogue: Catalogue, choices_in: str, settings: dict[str, object]
) -> None:
    run = flag_bypass(catalogue, choices_in=choices_in, **settings)
    bypass = run.by_id()[FLAGBYPASS]
    assert (bypass.verdict, bypass.layer) == (Verdict.REFUSED, Layer.TOOL), (bypass.reason, bypass.evidence)
    sent = " ".join(line for line in bypass.evidence if "-> delete_collection(" in line)
    assert all(f'"on_links": "{choice}"' in sent for choice in ("delete", "keep", "cancel")), sent
    assert not bypass.effect.observed, bypass.effect
