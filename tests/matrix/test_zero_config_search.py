"""Zero configuration completes the honest flow on servers that refuse its first values (issue 30).

targets/zc_shapes/server.py, one shape per cause: a business rule said only in the
refusal (an enum and a range), a subject that must be made first, a log that grows on
every call, an unannotated read tool that alone shows the effect, a challenge echoed
back, a challenge the server signed itself that comes back as the signature, a
`needs_confirm` payload, an effect that is only a new file (an outbox the first post
creates) beside a log every call creates, a draft whose id is `draft_id` and whose
approve call needs the phrase the staging result states, a chain of three tools (propose mints
the id, whose values only its refusals state; a check hands back the token; the action answers a
made-up id with an ordinary `ok: false`), a preview that names its own `dry_run` flag in prose. Nothing
is configured. Each careful shape is judged
refused, its flawed twin vulnerable: the search only counts when attacks are judged.

Each shape is built in process (`py:FILE:build_server`): the search reads tools, refusals and files, which
no transport changes, and a process per world cost seven times the CPU. The same shapes over stdio, every
family of each careful one, are the corpus's cases `zc-shapes/*` (`mcp-confirm-audit corpus`,
docs/explanation/corpus.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Shared
from deadline import scaled

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.search import MAX_ATTEMPTS
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.report import build_report
from mcp_confirm_audit.report.document import headline
from mcp_confirm_audit.report.review_md import ReviewMarkdown
from mcp_confirm_audit.report.sarif import Sarif

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"
# The one attack each shape is judged by: a decline on an MRTR gate, a spent token presented again.
ATTACK = {
    "rules": "MCA-CONSENT-001",
    "subject": "MCA-CONSENT-001",
    "log": "MCA-CONSENT-001",
    "readtool": "MCA-CONSENT-001",
    "challenge": "MCA-TOKREUSE-001",
    "needs-confirm": "MCA-TOKREUSE-001",
    "signed": "MCA-TOKREUSE-001",
    "preview": "MCA-TOKREUSE-001",
    "outbox": "MCA-TOKREUSE-001",
    "draft": "MCA-TOKREUSE-001",
    "switch": "MCA-FLAGBYPASS-001",
    "dryrun": "MCA-FLAGBYPASS-001",
    "memo": "MCA-TOKREUSE-001",
    "allowlist": "MCA-TOKREUSE-001",
    "chain": "MCA-TOKMINT-001",
}
FLAW = {
    "MCA-CONSENT-001": "decline-acts",
    "MCA-TOKREUSE-001": "token-reuse",
    "MCA-FLAGBYPASS-001": "switch-acts",
    "MCA-TOKMINT-001": "token-unchecked",
}
# A careful shape with no honest flow at all (it never asks) cannot be refused, only left unjudged.
CAREFUL = {"switch": Verdict.INCONCLUSIVE}
GATED = {
    "rules": "set_vent",
    "subject": "clear_bed",
    "log": "set_vent",
    "readtool": "set_heater",
    "challenge": "drain_tank",
    "needs-confirm": "open_roof",
    "signed": "flush_line",
    "preview": "spray",
    "outbox": "post_notice",
    "draft": "order_seed",
    "switch": "prune_row",
    "dryrun": "order_compost",
    "memo": "file_note",
    "allowlist": "send_memo",
    "chain": "sow_plan",
}


def _audit(catalogue: Catalogue, generation: object, shape: str, *flaws: str) -> AuditRun:
    factory = {"shape": shape, "flaws": list(flaws)}
    return run_audit(
        scaled(Profile(command=f"py:{SHAPES}:build_server", factory_args=factory, call_timeout=10.0)),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.id == ATTACK[shape],
    )


Audit = Callable[..., AuditRun]


@pytest.fixture(scope="module")
def audit(catalogue: Catalogue, generation: object, across_workers: Shared[AuditRun]) -> Audit:
    """One audit per shape and flaw in this run (on any worker): the detail tests read the runs the matrix made."""
    done: dict[tuple[str, ...], AuditRun] = {}

    def run(shape: str, *flaws: str) -> AuditRun:
        if (shape, *flaws) not in done:
            done[(shape, *flaws)] = across_workers(
                "zero-config-search-" + "-".join((shape, *flaws)),
                lambda: _audit(catalogue, generation, shape, *flaws),
            )
        return done[(shape, *flaws)]

    return run


def control(run: AuditRun, tool: str, name: str) -> str:
    found = [c for c in run.controls if c.tool == tool and c.name == name]
    assert found, [(c.tool, c.name, c.detail) for c in run.controls]
    return found[0].detail


@pytest.mark.parametrize("flawed", [False, True], ids=["careful", "flawed"])
@pytest.mark.parametrize("shape", sorted(ATTACK))
def test_each_shape_is_judged_with_nothing_configured(audit: Audit, shape: str, flawed: bool) -> None:
    attack = ATTACK[shape]
    run = audit(shape, *([FLAW[attack]] if flawed else []))
    result = run.by_id()[attack]
    approve = control(run, GATED[shape], "approve")
    assert result.tool == GATED[shape]
    expected = Verdict.VULNERABLE if flawed else CAREFUL.get(shape, Verdict.REFUSED)
    assert result.verdict is expected, (approve, result.reason)


def test_the_search_follows_the_refusals_and_says_where_each_value_came_from(audit: Audit) -> None:
    said = control(audit("rules"), "set_vent", "search")
    assert said.startswith(
        f"honest-flow search (at most {MAX_ATTEMPTS} calls of the tool): got past the refusals"
    )
    assert "vent from set_vent's refusal" in said, said
    assert "one of north, south, roof" in said, said
    assert "angle from set_vent's refusal" in said, said
    assert "between 15 and 75" in said, said
    assert "attempt 3: " in said, said
    assert '"angle": 45' in said, said
    assert "attempt 4" not in said, said


def test_a_subject_is_made_with_the_servers_own_tool_as_setup(audit: Audit) -> None:
    run = audit("subject")
    said = control(run, "clear_bed", "search")
    assert "bed_id from setup: plant_bed makes a bed for every use" in said, said
    assert "List beds first" in said, said
    # The tool that makes the subject is a step of the flow, not a gate of its own: left out, saying so.
    assert "plant_bed: makes clear_bed's subject (setup the honest-flow search learned)" in run.left_out
    assert {r.tool for r in run.results} == {"clear_bed"}


def test_a_log_that_grows_on_every_call_is_bookkeeping_named_as_such(audit: Audit) -> None:
    run = audit("log")
    kept = control(run, "set_vent", "bookkeeping")
    assert "calls.log: grew on every one of" in kept, kept
    assert "bookkeeping (a log or a queue)" in kept, kept
    assert "calls.log" not in control(run, "set_vent", "approve")


def test_an_unannotated_reader_is_classified_by_calling_it_and_shows_the_effect(audit: Audit) -> None:
    run = audit("readtool")
    assert any(
        line.startswith("show_heater: no annotations; two calls changed nothing") for line in run.left_out
    )
    assert {r.tool for r in run.results} == {"set_heater"}
    assert "tool:show_heater" in control(run, "set_heater", "approve")


def test_a_challenge_echoed_back_is_a_token_flow(audit: Audit) -> None:
    run = audit("challenge")
    approve = control(run, "drain_tank", "approve")
    assert "through token" in approve, approve
    said = control(run, "drain_tank", "search")
    assert "tank from drain_tank's refusal" in said, said


def test_a_challenge_the_server_signed_goes_back_whole_as_the_signature(audit: Audit) -> None:
    run = audit("signed")
    approve = control(run, "flush_line", "approve")
    assert "through token" in approve, approve
    said = control(run, "flush_line", "search")
    assert "line from flush_line's refusal" in said, said


def test_a_token_handed_out_by_another_tool_is_previewed_there(audit: Audit) -> None:
    run = audit("preview")
    approve = control(run, "spray", "approve")
    assert "through token" in approve, approve
    # The preview tool is a step of spray's flow, not a gate of its own.
    assert "preview_spray: a step of spray's token flow" in run.left_out, run.left_out
    assert {r.tool for r in run.results} == {"spray"}
    # Its refusals are searched through it: a list's items, a range.
    said = control(run, "spray", "search")
    assert "crops from preview_spray's refusal" in said, said
    assert "litres from preview_spray's refusal" in said, said
    assert "reason from preview_spray's refusal" in said, said


def test_a_chain_of_three_tools_is_found_from_the_refusals_alone(audit: Audit) -> None:
    """propose (values said only in its refusals) mints the id, a check hands back its token, the action takes both.

    The check hands back a null token for the first kind the maker's refusal names (safe-migrations-mcp's
    `db` proposal with no connection): the search makes the subject again with the next kind.
    """
    run = audit("chain")
    approve = control(run, "sow_plan", "approve")
    assert "through token" in approve, approve
    said = control(run, "sow_plan", "search")
    assert "plan_id from setup: propose_sowing makes a plan for every use" in said, said
    # The maker's own refusals taught its values: a closed set, then an argument its schema left optional.
    assert "propose_sowing's arguments from its refusals" in said, said
    # A seed plan is checked with a null token: the plan is made again as the refusal's other kind.
    assert "then kind='cutting'" in said, said
    assert "no token handed out: the setup again with propose_sowing's kind='cutting'" in said, said
    assert {r.tool for r in run.results} == {"sow_plan"}
    assert "check_sowing: a step of sow_plan's token flow" in run.left_out, run.left_out
    assert "propose_sowing: makes sow_plan's subject (setup the honest-flow search learned)" in run.left_out


def test_a_token_flows_refused_preview_is_searched_through_the_preview(
    catalogue: Catalogue, generation: object
) -> None:
    """targets/messages: the preview refuses a number that is not eleven digits; nothing is configured."""
    messages = SHAPES.parents[1] / "messages" / "server.py"
    run = run_audit(
        scaled(Profile(command=f"py:{messages}:build_server", call_timeout=10.0)),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.id == "MCA-TOKREUSE-001",
    )
    said = control(run, "send_sms", "search")
    assert "to from send_sms's refusal" in said, said
    assert "eleven digits" in said, said
    assert "body from" not in said, said
    assert "through token" in control(run, "send_sms", "approve")
    assert run.by_id()["MCA-TOKREUSE-001"].verdict is Verdict.REFUSED


def test_a_file_only_the_approved_action_creates_is_its_effect_a_log_every_call_creates_is_not(
    audit: Audit,
) -> None:
    run = audit("outbox")
    approve = control(run, "post_notice", "approve")
    assert "through token" in approve, approve
    assert "root/outbox.jsonl" in approve, approve
    assert "notices.log" not in approve, approve
    kept = control(run, "post_notice", "bookkeeping")
    assert "root/notices.log" in kept, kept


def test_a_draft_id_is_the_pending_id_and_the_approve_call_carries_the_stated_phrase(audit: Audit) -> None:
    run = audit("draft")
    approve = control(run, "order_seed", "approve")
    assert "previewed, confirmed, acted" in approve, approve
    assert "through pending: root/greenhouse.json" in approve, approve
    assert {r.tool for r in run.results} == {"order_seed"}


def test_with_no_honest_flow_a_log_every_call_grows_is_bookkeeping_not_the_switchs_effect(
    audit: Audit,
) -> None:
    """tally-write-mcp: its audit log, written on every staged call, was read as a switch's effect."""
    careful = audit("switch").by_id()["MCA-FLAGBYPASS-001"]
    assert "audit.jsonl" not in careful.reason, careful.reason
    # Named as bookkeeping: learned by the controls (it moved on their refused calls) or by the attack's own
    # call with no switch set.
    assert any(
        line == "ignored as bookkeeping: root/audit.jsonl"
        or "root/audit.jsonl: grew on a call with no switch set" in line
        for line in careful.evidence
    ), careful.evidence
    flawed = audit("switch", "switch-acts").by_id()["MCA-FLAGBYPASS-001"]
    assert "root/greenhouse.json" in flawed.reason, flawed.reason
    assert "audit.jsonl" not in flawed.reason, flawed.reason


def test_a_preview_that_names_its_own_dry_run_flag_is_a_flag_flow_the_agent_completes_alone(
    catalogue: Catalogue, generation: object
) -> None:
    """finamatik-ops-mcp's create_order: "call again with dry_run=false to place the order" was left out as
    "did not ask, and showed no effect"; it is a flag flow whose flag is `dry_run: false`, which the agent
    sets itself. A sibling that names a flag it does not take (`price_compost`) is no flag flow."""
    run = run_audit(
        scaled(
            Profile(command=f"py:{SHAPES}:build_server", factory_args={"shape": "dryrun"}, call_timeout=10.0)
        ),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.id in ("MCA-SELFAPPROVE-001", "MCA-FLAGBYPASS-001"),
    )
    approve = control(run, "order_compost", "approve")
    assert "previewed, confirmed, acted (no file named) through flag: root/greenhouse.json" in approve, (
        approve
    )
    # The honest order took this week's delivery: the preview alone, refused in that world, is run again
    # in a fresh one, and so is every attack (finamatik's whole stock ordered by the approve control).
    isolation = control(run, "order_compost", "isolation")
    assert "the preview-alone control failed in the world the previous control left" in isolation, isolation
    alone = control(run, "order_compost", "preview-alone")
    assert alone.startswith("no effect (complete: Dry run"), alone
    assert "price_compost: did not ask, and showed no effect" in run.left_out, run.left_out
    assert {r.tool for r in run.results} == {"order_compost"}
    found = run.by_id()
    # Setting dry_run: false is the whole gate, and only the agent's calls set it.
    assert found["MCA-SELFAPPROVE-001"].verdict is Verdict.VULNERABLE, found["MCA-SELFAPPROVE-001"].reason
    assert "dry_run=False" in "\n".join(found["MCA-SELFAPPROVE-001"].evidence)
    # Its other switch, `rush`, still previews: no finding.
    assert found["MCA-FLAGBYPASS-001"].verdict is Verdict.REFUSED, found["MCA-FLAGBYPASS-001"].reason


def test_a_named_tool_that_did_not_ask_and_names_its_switch_is_told_the_flag_key(
    catalogue: Catalogue, generation: object
) -> None:
    """A profile that sets `dry_run: true` itself: no flag flow is taken from it, and the failed approve
    control says which `confirmation:` would drive it (finamatik-ops-mcp's create_order, named bare)."""
    profile = Profile(
        command=f"py:{SHAPES}:build_server",
        factory_args={"shape": "dryrun"},
        call_timeout=10.0,
        tool="order_compost",
        args={"bags": 3, "dry_run": True},
    )
    run = run_audit(scaled(profile), catalogue=catalogue, generation=generation, select=lambda spec: False)  # type: ignore[arg-type]
    approve = control(run, "order_compost", "approve")
    assert approve.startswith("value: did not ask"), approve
    assert "confirmation: {kind: flag, flag: {arg: dry_run, value: false}}" in approve, approve


def test_a_rule_about_a_field_inside_an_object_argument_and_an_approve_step_named_keep(audit: Audit) -> None:
    """magnemo-mcp: `note.store` refused in words; `{"staged": id, "status": "staged"}`; `keep(note)`."""
    run = audit("memo")
    said = control(run, "file_note", "search")
    assert "note.shelf from file_note's refusal" in said, said
    assert "note.bed from" not in said, said
    approve = control(run, "file_note", "approve")
    assert "previewed, confirmed, acted (no file named) through pending" in approve, approve
    assert "keep: a step of file_note's pending flow" in run.left_out, run.left_out
    assert "drop: the decline step of file_note's pending flow (on the person's no)" in run.left_out
    assert {r.tool for r in run.results} == {"file_note"}


def test_a_value_not_in_the_allowlist_is_taken_from_a_namespaced_listing(audit: Audit) -> None:
    """guarded-whatsapp-mcp: "recipient 'x' is not in the allowlist"; `wa_list_recipients` lists them."""
    run = audit("allowlist")
    assert any(
        line.startswith("gh_list_growers: no annotations; two calls changed nothing") for line in run.left_out
    )
    # A reader that says so in words is classified by calling it: its `limit` is no rule of the gate.
    assert any(
        line.startswith("gh_memo_tail: no annotations; two calls changed nothing") for line in run.left_out
    )
    said = control(run, "send_memo", "search")
    assert "recipient from gh_list_growers" in said, said
    assert "root/memo_outbox.jsonl" in control(run, "send_memo", "approve")


def test_a_search_that_gives_up_leaves_the_tool_unaudited_and_is_no_finding(
    catalogue: Catalogue, generation: object
) -> None:
    """Its refusal names no rule: the search gives up, nothing acted, and no report files a finding (trial 13)."""
    run = run_audit(
        scaled(
            Profile(command=f"py:{SHAPES}:build_server", factory_args={"shape": "opaque"}, call_timeout=10.0)
        ),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.id == "MCA-CONSENT-001",
    )
    said = control(run, "set_vent", "search")
    assert "gave up: set_vent's refusal names no rule the harness can follow" in said, said
    report = build_report(run.results, run.controls, {"tools": ["set_vent"]})
    assert report.failed_controls == ()
    assert headline(report).startswith("not audited: the honest flow failed")
    assert "0 failed refusal control(s)" in ReviewMarkdown().render(report)
    sarif = json.loads(Sarif().render(report))["runs"][0]
    assert [(r["ruleId"], r["kind"]) for r in sarif["results"]] == [("control-approve", "open")]
    assert run.by_id()["MCA-CONSENT-001"].verdict is Verdict.INCONCLUSIVE
