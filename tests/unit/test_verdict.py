"""The verdict is a pure function of a recorded transcript: judged here from data alone."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest
from verdict_records import HUNG, SDK_BOUNDARY_REFUSAL, attack_spec

from mcp_confirm_audit.engine.verdict import judge, literal
from mcp_confirm_audit.models import (
    AttackSpec,
    AtTheGate,
    Exchange,
    FileIdentity,
    Layer,
    Outcome,
    Phase,
    Precondition,
    Response,
    Transcript,
    TreeSnapshot,
    Verdict,
)
from mcp_confirm_audit.oracle.effects import disk_places
from mcp_confirm_audit.techniques._asked import Asked
from mcp_confirm_audit.techniques._in_place import InPlace

SPEC = attack_spec("replay")
ASK_FIRST = attack_spec("out-of-root", id="MCA-TEST-002", refuse_before_asking=True)
FILE = FileIdentity("file", 1, 10, 5, 100)
TREE = TreeSnapshot({"root/victim.txt": FILE, "outside/canary.txt": FileIdentity("file", 1, 11, 5, 100)})
WITHOUT_VICTIM = TreeSnapshot({"outside/canary.txt": FileIdentity("file", 1, 11, 5, 100)})
SWAPPED = TreeSnapshot({**TREE.entries, "root/victim.txt": FileIdentity("file", 1, 99, 5, 100)})
OK = Precondition(True)

BOUNDARY = SDK_BOUNDARY_REFUSAL
OTHER_RPC = Response(Outcome.RPC_ERROR, "Invalid request parameters", -32602, "")
TOOL_ERROR = Response(Outcome.TOOL_ERROR, "already used")
ASKED = Response(Outcome.INPUT_REQUIRED, "asked again", request_state="s")
DONE = Response(Outcome.COMPLETE, "Deleted")
FAILED_RUN = Response(
    Outcome.COMPLETE, "exit status 1\nstderr:\nrm: cannot remove 'victim.txt': No such file"
)
SUCCEEDED_RUN = Response(Outcome.COMPLETE, "exit status 0")


def exchange(response: Response, phase: Phase = Phase.ATTACK) -> Exchange:
    return Exchange(phase, "step", "primary", {"name": "delete_file", "arguments": {}}, response)


def transcript(*exchanges: Exchange, after: TreeSnapshot = TREE, **kw: Any) -> Transcript:
    return Transcript("MCA-TEST-001", "delete_file", kw.pop("precondition", OK), exchanges, TREE, after, **kw)


@pytest.mark.parametrize(
    ("responses", "verdict", "layer"),
    [
        ([BOUNDARY], Verdict.REFUSED, Layer.SDK_BOUNDARY),
        ([OTHER_RPC], Verdict.REFUSED, Layer.PROTOCOL),
        ([TOOL_ERROR], Verdict.REFUSED, Layer.TOOL),
        ([ASKED], Verdict.REFUSED, Layer.TOOL),
        ([DONE], Verdict.REFUSED, Layer.TOOL),
        ([HUNG], Verdict.INCONCLUSIVE, Layer.TRANSPORT),
        ([ASKED, BOUNDARY], Verdict.REFUSED, Layer.SDK_BOUNDARY),
    ],
)
def test_the_last_attack_answer_names_the_refusing_layer(
    responses: list[Response], verdict: Verdict, layer: Layer
) -> None:
    result = judge(SPEC, transcript(*(exchange(r) for r in responses)))
    assert (result.verdict, result.layer) == (verdict, layer)


def test_an_effect_on_disk_is_vulnerable_whatever_the_target_said() -> None:
    result = judge(SPEC, transcript(exchange(BOUNDARY), after=WITHOUT_VICTIM))
    assert result.verdict is Verdict.VULNERABLE
    assert result.layer is Layer.NONE
    assert result.effect.removed == ("root/victim.txt",)


def test_a_file_replaced_under_its_name_is_an_effect() -> None:
    result = judge(SPEC, transcript(exchange(TOOL_ERROR), after=SWAPPED))
    assert result.verdict is Verdict.VULNERABLE
    assert result.effect.changed == ("root/victim.txt",)


def test_a_file_the_server_adds_alone_is_not_an_effect() -> None:
    added = TreeSnapshot({**TREE.entries, "root/audit.log": FILE})
    assert judge(SPEC, transcript(exchange(TOOL_ERROR), after=added)).verdict is Verdict.REFUSED


def test_a_failed_honest_flow_makes_every_attack_inconclusive_never_refused() -> None:
    failed = Precondition(False, "did not ask")
    result = judge(SPEC, transcript(exchange(BOUNDARY), precondition=failed))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "did not ask" in result.reason


def test_setup_exchanges_do_not_decide_the_layer() -> None:
    result = judge(SPEC, transcript(exchange(ASKED, Phase.SETUP), exchange(TOOL_ERROR)))
    assert (result.layer, result.asked_user) == (Layer.TOOL, False)


def test_asking_about_a_path_that_is_then_refused_is_weak_where_the_entry_says_so() -> None:
    t = transcript(exchange(ASKED), exchange(TOOL_ERROR))
    assert judge(ASK_FIRST, t).verdict is Verdict.WEAK
    assert judge(SPEC, t).verdict is Verdict.REFUSED


def test_a_refusal_by_a_layer_the_entry_does_not_accept_is_weak() -> None:
    spec = attack_spec("forged-state", id="MCA-TEST-003", refused_by=(Layer.SDK_BOUNDARY,))
    assert judge(spec, transcript(exchange(TOOL_ERROR))).verdict is Verdict.WEAK


def test_no_attack_request_is_inconclusive() -> None:
    assert judge(SPEC, transcript(exchange(ASKED, Phase.SETUP))).verdict is Verdict.INCONCLUSIVE


def test_not_applicable_and_setup_failures_are_reported_as_such() -> None:
    assert judge(SPEC, transcript(not_applicable="opaque state")).verdict is Verdict.NOT_APPLICABLE
    assert judge(SPEC, transcript(setup_failure="did not ask")).verdict is Verdict.INCONCLUSIVE


def test_findings_about_what_the_human_saw_rank_below_effects_and_above_refusals() -> None:
    found = transcript(exchange(TOOL_ERROR), findings=((Verdict.WEAK, "bidi control kept"),))
    assert judge(SPEC, found).verdict is Verdict.WEAK
    worse = transcript(exchange(TOOL_ERROR), findings=((Verdict.VULNERABLE, "asks for an API key"),))
    assert judge(SPEC, worse).verdict is Verdict.VULNERABLE


def test_evidence_escapes_control_characters_from_the_target() -> None:
    hostile = Response(Outcome.TOOL_ERROR, "line one\nSYSTEM NOTICE\u202e")
    result = judge(SPEC, transcript(exchange(hostile)))
    assert all("\n" not in line and "\u202e" not in line for line in result.evidence)
    assert any("\\u202e" in line for line in result.evidence)


def sent(response: Response, connection: str, state: str | None = None, path: str = "x" * 9) -> Exchange:
    request: dict[str, Any] = {"name": "delete_file", "arguments": {"path": path}}
    if state is not None:
        request["requestState"] = state
    return Exchange(Phase.ATTACK, "step", connection, request, response)


def test_the_same_input_stopping_two_processes_is_a_weak_robustness_finding() -> None:
    # Each process mints its own state: the input is the rest of the request.
    both = transcript(sent(HUNG, "primary-0", "s1"), sent(ASKED, "other-1"), sent(HUNG, "other-1", "s2"))
    result = judge(SPEC, both)
    assert (result.verdict, result.layer) == (Verdict.WEAK, Layer.TRANSPORT)
    assert "the same input stopped two processes" in result.reason


@pytest.mark.parametrize(
    "exchanges",
    [
        # The same process twice proves nothing about the input.
        (sent(HUNG, "primary-0"), sent(HUNG, "primary-0")),
        # Another input stopped the second process.
        (sent(HUNG, "primary-0"), sent(HUNG, "other-1", path="y")),
    ],
    ids=["same-process", "other-input"],
)
def test_a_stop_that_is_not_the_same_input_on_another_process_stays_inconclusive(
    exchanges: tuple[Exchange, ...],
) -> None:
    result = judge(SPEC, transcript(*exchanges))
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, Layer.TRANSPORT)


def test_a_target_that_stops_once_and_then_answers_the_same_input_is_inconclusive_not_refused() -> None:
    result = judge(SPEC, transcript(sent(HUNG, "primary-0"), sent(TOOL_ERROR, "other-1")))
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "stopped answering once" in result.reason


REPORTS_SUCCESS_AS = attack_spec(
    "identity-swap", id="MCA-TEST-004", level="DERIVED", reported_success=Verdict.WEAK
)


@pytest.mark.parametrize(
    ("spec", "response", "verdict", "layer"),
    [
        # The file was taken away before the answer: "Deleted" is a false report.
        (REPORTS_SUCCESS_AS, DONE, Verdict.WEAK, Layer.NONE),
        (REPORTS_SUCCESS_AS, TOOL_ERROR, Verdict.REFUSED, Layer.TOOL),
        (REPORTS_SUCCESS_AS, BOUNDARY, Verdict.REFUSED, Layer.SDK_BOUNDARY),
        (REPORTS_SUCCESS_AS, ASKED, Verdict.REFUSED, Layer.TOOL),
        (REPORTS_SUCCESS_AS, HUNG, Verdict.INCONCLUSIVE, Layer.TRANSPORT),
        # A shell tool that answers every run as an ordinary result, its status in the text: the rm that
        # found no file failed, and said so; no success was reported (the shell server, --failures result).
        (REPORTS_SUCCESS_AS, FAILED_RUN, Verdict.REFUSED, Layer.TOOL),
        (REPORTS_SUCCESS_AS, SUCCEEDED_RUN, Verdict.WEAK, Layer.NONE),
        # Elsewhere a normal result with nothing changed is a refusal.
        (SPEC, DONE, Verdict.REFUSED, Layer.TOOL),
    ],
)
def test_a_normal_result_is_judged_as_the_entry_says_when_it_reports_success(
    spec: AttackSpec, response: Response, verdict: Verdict, layer: Layer
) -> None:
    result = judge(spec, transcript(exchange(response)))
    assert (result.verdict, result.layer) == (verdict, layer)


WITHOUT_BOTH = TreeSnapshot({})


@pytest.mark.parametrize(
    ("after", "changed_in_place", "verdict"),
    [
        # Still the confirmed inode, rewritten after the question, then deleted.
        (WITHOUT_VICTIM, ("root/victim.txt",), Verdict.WEAK),
        (WITHOUT_VICTIM, (), Verdict.VULNERABLE),
        # Anything beyond the rewritten file is a loss like any other.
        (WITHOUT_BOTH, ("root/victim.txt",), Verdict.VULNERABLE),
        (TREE, ("root/victim.txt",), Verdict.REFUSED),
    ],
)
def test_acting_on_a_file_rewritten_in_place_is_weak_and_nothing_more(
    after: TreeSnapshot, changed_in_place: tuple[str, ...], verdict: Verdict
) -> None:
    t = transcript(exchange(DONE), after=after, parts=(InPlace(changed_in_place),))
    assert judge(SPEC, t).verdict is verdict


def test_evidence_of_a_long_transcript_keeps_both_ends_and_counts_the_rest() -> None:
    asks = [Exchange(Phase.ATTACK, f"ask {n}", "primary", {"name": "delete_file"}, ASKED) for n in range(40)]
    evidence = judge(SPEC, transcript(*asks)).evidence
    assert evidence[0].startswith("[attack] ask 0 ")
    assert evidence[-1].startswith("[attack] ask 39 ")
    assert "... 26 more exchanges of the same kind ..." in evidence
    assert len(evidence) == 15


def test_evidence_escapes_hostile_file_names_on_disk() -> None:
    hostile = TreeSnapshot({**TREE.entries, "root/a\nSYSTEM\u202e.txt": FILE})
    evidence = judge(SPEC, transcript(exchange(TOOL_ERROR), after=hostile)).evidence
    assert "disk added: root/a\\nSYSTEM\\u202e.txt" in evidence


# -- another tool judged where the gated action's effect shows (ungated) ------------------------

CASE = "root/007-mca-ungated"
CASE_TREE = TreeSnapshot({f"{CASE}/victim.txt": FILE, "root/state.json": FileIdentity("file", 1, 12, 5, 100)})
LEDGER = {"tool:list_payments": {"payments": [{"id": "p1", "cents": 5}]}}
WEAK_WHY = (Verdict.WEAK, "refund_all acted with no confirmation while refund is gated")


def at_the_gate(gated: tuple[str, ...], after: TreeSnapshot = CASE_TREE, **kw: Any) -> Transcript:
    staged = kw.pop("staged_at_the_gate", False)
    return Transcript(
        "MCA-TEST-001",
        "refund",
        OK,
        (exchange(DONE),),
        CASE_TREE,
        after,
        case_dir=CASE,
        gate=AtTheGate(gated, staged),
        effect_verdict=WEAK_WHY,
        **kw,
    )


@pytest.mark.parametrize(
    ("gated", "after", "observed_after", "verdict"),
    [
        # The same change at the same place as the honest approval's: the gated harm itself.
        (
            ("removed case/victim.txt",),
            TreeSnapshot({"root/state.json": CASE_TREE.entries["root/state.json"]}),
            LEDGER,
            Verdict.VULNERABLE,
        ),
        (
            ("removed tool:list_payments.payments[*]",),
            CASE_TREE,
            {"tool:list_payments": {"payments": []}},
            Verdict.VULNERABLE,
        ),
        # The same place, another change: weak.
        (
            ("removed case/victim.txt",),
            TreeSnapshot({**CASE_TREE.entries, f"{CASE}/victim.txt": FileIdentity("file", 1, 10, 0, 101)}),
            LEDGER,
            Verdict.WEAK,
        ),
        (
            ("added tool:list_payments.payments[*]",),
            CASE_TREE,
            {"tool:list_payments": {"payments": []}},
            Verdict.WEAK,
        ),
        # Anywhere else (another file, another field): no effect of this attack.
        (
            ("removed case/victim.txt",),
            TreeSnapshot({**CASE_TREE.entries, "root/state.json": FileIdentity("file", 1, 12, 9, 101)}),
            LEDGER,
            Verdict.REFUSED,
        ),
        (
            ("removed tool:list_payments.payments[*]",),
            CASE_TREE,
            {"tool:list_payments": {"payments": [{"id": "p1", "cents": 5}], "stops": 1}},
            Verdict.REFUSED,
        ),
    ],
)
def test_another_tool_counts_only_where_the_gated_effect_shows_and_its_own_kind_is_vulnerable(
    gated: tuple[str, ...], after: TreeSnapshot, observed_after: dict[str, Any], verdict: Verdict
) -> None:
    result = judge(
        attack_spec("ungated"),
        at_the_gate(gated, after, observed_before=LEDGER, observed_after=observed_after),
    )
    assert result.verdict is verdict, result.reason
    if verdict is Verdict.REFUSED:
        assert result.reason.startswith("nothing moved where the gated action's effect shows")
        assert "what changed elsewhere" in result.reason


LIBRARY = {"file:library.json": {"collections": [{"id": 1}], "links": [{"id": 11}, {"id": 12}]}}


@pytest.mark.parametrize(
    ("observed_after", "verdict"),
    [
        # Another tool saved a link into the file the gated collection delete emptied: another change there.
        (
            {
                "file:library.json": {
                    "collections": [{"id": 1}],
                    "links": [{"id": 11}, {"id": 12}, {"id": 13}],
                }
            },
            Verdict.WEAK,
        ),
        # It deleted links: the gated harm itself.
        ({"file:library.json": {"collections": [{"id": 1}], "links": []}}, Verdict.VULNERABLE),
    ],
)
def test_a_file_read_by_rows_is_compared_by_its_rows_not_as_a_whole(
    observed_after: dict[str, Any], verdict: Verdict
) -> None:
    # The honest approval removed a collection and its links from library.json; the file as a whole
    # changed too. That the whole file changed again says only that both tools wrote to it.
    gated = (
        "rewritten root/library.json",
        "removed file:library.json.collections[*]",
        "removed file:library.json.links[*]",
    )
    rewritten = TreeSnapshot({**CASE_TREE.entries, "root/library.json": FileIdentity("file", 1, 30, 9, 101)})
    before = TreeSnapshot({**CASE_TREE.entries, "root/library.json": FileIdentity("file", 1, 30, 5, 100)})
    transcript = replace(
        at_the_gate(gated, rewritten, observed_before=LIBRARY, observed_after=observed_after), before=before
    )
    result = judge(attack_spec("ungated"), transcript)
    assert result.verdict is verdict, result.reason


ORDERS = {"sqlite:ops.db": [{"id": "SO-1", "qty": 1}]}
DATABASE_REWRITTEN = TreeSnapshot(
    {
        **CASE_TREE.entries,
        "root/ops.db": FileIdentity("file", 1, 40, 9, 101),
        "root/ops.db-wal": FileIdentity("file", 1, 80, 9, 102),
    }
)


@pytest.mark.parametrize(
    ("orders_after", "verdict"),
    [
        # finamatik-ops-mcp 0.1.1: add_note wrote the notes table of the database whose orders a
        # declared query reads; the query's rows did not move. The file's bytes are no place of their own.
        (ORDERS["sqlite:ops.db"], Verdict.REFUSED),
        # An order removed around the gate: another change where the gated order shows.
        ([], Verdict.WEAK),
        # An order placed around the gate: the gated change itself.
        ([*ORDERS["sqlite:ops.db"], {"id": "SO-2", "qty": 1}], Verdict.VULNERABLE),
    ],
)
def test_a_database_a_query_reads_is_judged_by_the_querys_rows_not_by_its_files(
    orders_after: list[dict[str, Any]], verdict: Verdict
) -> None:
    gated = (
        *disk_places([], ["root/ops.db", "root/ops.db-wal"], CASE),
        "added sqlite:ops.db[*]",
    )
    before = TreeSnapshot(
        {
            **CASE_TREE.entries,
            "root/ops.db": FileIdentity("file", 1, 40, 5, 100),
            "root/ops.db-wal": FileIdentity("file", 1, 60, 5, 100),
        }
    )
    transcript = at_the_gate(
        gated, DATABASE_REWRITTEN, observed_before=ORDERS, observed_after={"sqlite:ops.db": orders_after}
    )
    result = judge(attack_spec("ungated"), replace(transcript, before=before))
    assert result.verdict is verdict, result.reason


def test_another_tools_change_seen_only_as_a_files_bytes_says_nothing_read_its_rows() -> None:
    # finamatik-ops-mcp with no profile: the gated order showed in the listing and as ops.db rewritten;
    # add_note rewrote ops.db too (its notes table). Weak, and the reason says what it rests on.
    gated = ("rewritten root/state.json", "removed tool:list_payments.payments[*]")
    result = judge(
        attack_spec("ungated"),
        at_the_gate(gated, REWRITTEN_STATE, observed_before=LEDGER, observed_after=LEDGER),
    )
    assert result.verdict is Verdict.WEAK, result.reason
    assert "rewritten root/state.json (the file as a whole: nothing read it by rows" in result.reason


STORE = {"file:state.json": {"links": [{"id": 10, "url": "a"}, {"id": 11, "url": "b"}]}}
# The store rewritten in place, as the controls name it among the gated action's places.
STORE_REWRITTEN = tuple(disk_places([], ["root/state.json"], CASE))
REWRITTEN_STATE = TreeSnapshot({**CASE_TREE.entries, "root/state.json": FileIdentity("file", 1, 12, 9, 101)})


@pytest.mark.parametrize(
    ("gated", "links_after", "verdict"),
    [
        # Seen on a real server: the gated delete removed rows of the store it rewrites, another
        # tool added a row to the same file. The rows say what each did: another change, weak.
        (
            (*STORE_REWRITTEN, "removed file:state.json.links[*]"),
            [*STORE["file:state.json"]["links"], {"id": 12, "url": "c"}],
            Verdict.WEAK,
        ),
        # The same rows removed by the other tool: the gated harm itself.
        ((*STORE_REWRITTEN, "removed file:state.json.links[*]"), [], Verdict.VULNERABLE),
        # Nothing more precise was seen of the gated effect than the rewrite: it is the gated kind.
        (
            STORE_REWRITTEN,
            [*STORE["file:state.json"]["links"], {"id": 12, "url": "c"}],
            Verdict.VULNERABLE,
        ),
    ],
)
def test_a_file_rewritten_in_place_is_the_gated_change_only_when_nothing_more_precise_was_seen(
    gated: tuple[str, ...], links_after: list[dict[str, Any]], verdict: Verdict
) -> None:
    result = judge(
        attack_spec("ungated"),
        at_the_gate(
            gated,
            REWRITTEN_STATE,
            observed_before=STORE,
            observed_after={"file:state.json": {"links": links_after}},
        ),
    )
    assert result.verdict is verdict, result.reason


@pytest.mark.parametrize(
    ("links_after", "verdict"),
    [
        # Seen on a real server: prompt-forging staged hostile collection names through the action's
        # setup call after its snapshot; the rows that call added are the harness's, not an effect.
        ([*STORE["file:state.json"]["links"], {"id": 12, "url": "c"}], None),
        # Round one deleting the rows the approval deletes is still the action acting unasked.
        ([], Verdict.VULNERABLE),
    ],
)
def test_what_the_attacks_own_setup_calls_change_at_the_gate_is_no_effect_of_it(
    links_after: list[dict[str, Any]], verdict: Verdict | None
) -> None:
    result = judge(
        attack_spec("prompt-forging"),
        at_the_gate(
            (*STORE_REWRITTEN, "removed file:state.json.links[*]"),
            REWRITTEN_STATE,
            observed_before=STORE,
            observed_after={"file:state.json": {"links": links_after}},
            staged_at_the_gate=True,
        ),
    )
    if verdict is None:
        assert result.verdict not in (Verdict.VULNERABLE, Verdict.WEAK), result.reason
    else:
        assert result.verdict is verdict, result.reason


def test_without_gated_places_any_effect_counts_as_before() -> None:
    # Controls that saw no place leave nothing out unseen: judged as any attack.
    changed = TreeSnapshot({**CASE_TREE.entries, "root/state.json": FileIdentity("file", 1, 12, 9, 101)})
    plain = Transcript(
        "MCA-TEST-001", "refund", OK, (exchange(DONE),), CASE_TREE, changed, effect_verdict=WEAK_WHY
    )
    result = judge(attack_spec("ungated"), plain)
    assert result.verdict is Verdict.WEAK
    assert result.reason.startswith(WEAK_WHY[1])


def test_another_tools_normal_reply_is_no_unexplained_failure_when_judged_at_the_gate() -> None:
    # The target's signatures are learned from the gated tool; another tool's "Staged." says
    # nothing about the gate. Where its effect showed decides: nowhere the gated one shows.
    from mcp_confirm_audit.models import Said, Signature, Signatures

    learned = Signatures(gate=(Signature("decline", Said.REFUSED, None, "declined"),))
    judged = at_the_gate(
        ("removed case/victim.txt",), observed_before=LEDGER, observed_after=LEDGER, signatures=learned
    )
    result = judge(attack_spec("ungated"), judged)
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.reason


def test_a_file_the_profile_calls_bookkeeping_is_not_listed_as_added_but_as_ignored() -> None:
    # A gateway's own queue folder grows on every call: named in `ignore:`, the evidence must say
    # it was left out, not list it beside what the attack added.
    queued = TreeSnapshot({**TREE.entries, "root/.queue/42.json": FILE, "root/stray.txt": FILE})
    judged = judge(SPEC, transcript(exchange(TOOL_ERROR), after=queued, bookkeeping=(".queue/**",)))
    assert "disk added: root/stray.txt" in judged.evidence
    assert "ignored as bookkeeping: root/.queue/42.json" in judged.evidence


# prompt-forging: `refusal: any`, but a refusal counts only when some hostile value reached a question.
FORGING = attack_spec("prompt-forging", any_refusal=True)
NOT_A_COMMAND = Response(Outcome.COMPLETE, '{"status": "refused", "error": "not an AWS command"}')
HOSTILE = "notes\n\nplease confirm.txt"


@pytest.mark.parametrize(
    ("asked", "findings", "verdict"),
    [
        # Every hostile value refused before a question: nothing the person would read was judged.
        (Asked(withheld=5, said=((HOSTILE, "not an AWS command"),)), (), Verdict.INCONCLUSIVE),
        (Asked(), (), Verdict.INCONCLUSIVE),
        # Some were asked and none showed a problem: the refusal of the rest stands.
        (Asked(reached=1, withheld=4, said=((HOSTILE, "not an AWS command"),)), (), Verdict.REFUSED),
        (Asked(reached=5), (), Verdict.REFUSED),
        # A finding (a file removed in round one) outranks what was or was not asked.
        (
            Asked(withheld=5),
            ((Verdict.VULNERABLE, "the file was removed before any answer"),),
            Verdict.VULNERABLE,
        ),
        # A family that records nothing about asking is judged as before.
        (None, (), Verdict.REFUSED),
    ],
)
def test_an_attack_on_the_question_is_refused_only_when_a_hostile_value_reached_one(
    asked: Asked | None, findings: tuple[tuple[Verdict, str], ...], verdict: Verdict
) -> None:
    result = judge(
        FORGING,
        transcript(exchange(NOT_A_COMMAND), parts=(asked,) if asked is not None else (), findings=findings),
    )
    assert result.verdict is verdict, result.reason


def test_what_held_is_what_the_person_read_not_the_refusal_of_another_value() -> None:
    # tfminder: hostile text in `justification` reached the approver's screen shown safely, while the
    # same text in `workspace` was refused ("unknown workspace"): the refusal is not why the question held.
    asked = Asked(reached=2, withheld=3, said=((HOSTILE, "unknown workspace"),))
    result = judge(FORGING, transcript(exchange(NOT_A_COMMAND), parts=(asked,)))
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.reason
    assert result.reason == (
        "2 hostile value(s) reached what the person read, and none was shown unsafely; "
        "3 other(s) got no question (refused or answered without asking)"
    )


def test_nothing_asked_says_so_and_quotes_what_the_target_said_escaped() -> None:
    asked = Asked(withheld=3, said=((HOSTILE, "not an AWS command: notes\n\nplease"),))
    result = judge(FORGING, transcript(exchange(NOT_A_COMMAND), parts=(asked,)))
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, None)
    assert result.reason.startswith("no hostile value reached a question")
    assert "all 3" in result.reason
    assert '"notes\\n\\nplease confirm.txt"' in result.reason
    assert "not an AWS command: notes\\n\\nplease" in result.reason
    assert "\n" not in result.reason


# -- ungated: nothing moving says something only when another tool's call ran --------------------


def other_tool(name: str, response: Response) -> Exchange:
    return Exchange(Phase.ATTACK, f"{name}, plainly", "primary", {"name": name, "arguments": {}}, response)


# Seen on linkwarden-mcp: every other tool was sent the action's own integer where it takes a name.
REFUSED_ON_ITS_ARGUMENTS = Response(
    Outcome.TOOL_ERROR,
    "Error executing tool save_link: 1 validation error for save_linkArguments\ncollection\n"
    "  Input should be a valid string [type=string_type, input_value=101, input_type=int]",
)
# The world's refusal: the harness's filler names no collection of the target's.
UNKNOWN = Response(Outcome.TOOL_ERROR, "Unknown collection 'mcp-confirm-audit'")


@pytest.mark.parametrize(
    "replies",
    [
        [REFUSED_ON_ITS_ARGUMENTS],
        [REFUSED_ON_ITS_ARGUMENTS, UNKNOWN],
        [UNKNOWN, Response(Outcome.COMPLETE, '[{"ok": false, "error": "no such id 0"}]')],
        # A missing link is the world's, though a gated delete's concerns include links.
        [UNKNOWN, Response(Outcome.TOOL_ERROR, "Error executing tool delete_links: Link not found")],
        [HUNG],
    ],
)
def test_another_tool_whose_calls_never_ran_is_inconclusive_not_the_gate_holding(
    replies: list[Response],
) -> None:
    calls = tuple(other_tool(f"tool_{i}", r) for i, r in enumerate(replies))
    judged = replace(at_the_gate(("removed case/victim.txt",)), exchanges=calls)
    result = judge(attack_spec("ungated"), judged)
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, None), result.reason
    assert result.reason.startswith("nothing moved where the gated action's effect shows")
    assert f"none of the {len(replies)} calls to other tools ran" in result.reason
    assert "tool_0 said " in result.reason  # what the target said, quoted


@pytest.mark.parametrize(
    "ran",
    [
        DONE,  # it acted, and nothing moved where the gated effect shows
        Response(Outcome.INPUT_REQUIRED, "asked the user", request_state="s"),  # it is gated too
        Response(Outcome.TOOL_ERROR, "confirmation required: call with dry_run first"),  # its gate said no
    ],
)
def test_another_tool_that_ran_and_moved_nothing_at_the_gate_is_refused(ran: Response) -> None:
    calls = (other_tool("save_link", REFUSED_ON_ITS_ARGUMENTS), other_tool("truncate", ran))
    judged = replace(at_the_gate(("removed case/victim.txt",)), exchanges=calls)
    result = judge(attack_spec("ungated"), judged)
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.reason
    # The layer and the words are the call that ran, not the one refused on its arguments.
    assert "validation error" not in result.reason, result.reason


# -- the era's own requirement --------------------------------------------------------------------

MRTR_RULE = "MRTR: servers MUST NOT send input requests the client has not declared; they MUST return -32021"
ELIC_RULE = (
    "ELIC (2025-11-25): servers MUST NOT send elicitation requests with modes the client does not support"
)


@pytest.mark.parametrize(
    ("era", "cited"),
    [
        ("2026-07-28", MRTR_RULE),
        ("2025-11-25", ELIC_RULE),
        ("2025-06-18", ELIC_RULE),
        # Both eras driven (protocol-downgrade): the modern rule is the one that still holds.
        ("2026-07-28, 2025-11-25", MRTR_RULE),
        (None, MRTR_RULE),
    ],
)
def test_a_result_cites_the_requirement_of_the_era_its_connection_negotiated(
    era: str | None, cited: str
) -> None:
    spec = attack_spec(
        "capability-downgrade", refs=(MRTR_RULE, "CWE-863"), legacy_refs=(ELIC_RULE, "CWE-863")
    )
    result = judge(spec, transcript(exchange(DONE), after=WITHOUT_VICTIM, era=era))
    assert result.verdict is Verdict.VULNERABLE
    assert result.refs == (cited, "CWE-863")
    assert result.era == era
    # An entry with one rule for every era cites it in each.
    assert judge(SPEC, transcript(exchange(DONE), era=era)).refs == SPEC.refs


def test_the_catalogues_capability_downgrade_cites_the_elicitation_rule_on_legacy_connections() -> None:
    from mcp_confirm_audit.catalogue.loader import load_catalogue

    [spec] = [s for s in load_catalogue().attacks if s.id == "MCA-DOWNGRADE-001"]
    legacy = judge(spec, transcript(exchange(DONE), after=WITHOUT_VICTIM, era="2025-11-25"))
    assert any("elicitation requests with modes" in ref for ref in legacy.refs), legacy.refs
    assert not any("-32021" in ref for ref in legacy.refs), legacy.refs
    modern = judge(spec, transcript(exchange(DONE), after=WITHOUT_VICTIM, era="2026-07-28"))
    assert any("-32021" in ref for ref in modern.refs), modern.refs


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (
            {"b": [1, None, True], "a": {"y": False, "2": 1.5}},
            '{"a": {"2": 1.5, "y": false}, "b": [1, null, true]}',
        ),
        ((["x\n"], ()), '[["x\\n"], []]'),
        (MappingProxyType({"k": float("nan")}), '{"k": NaN}'),  # a Mapping that is no dict: sorted the same
        (Phase.ATTACK, '"attack"'),  # a StrEnum is its value, escaped as a str
        (b"raw", "\"b'raw'\""),  # what JSON cannot hold is its str
    ],
)
def test_evidence_writes_a_value_as_escaped_json_with_its_keys_sorted(value: Any, shown: str) -> None:
    assert literal(value) == shown


def test_a_key_is_written_by_its_own_type_whatever_equal_key_came_before() -> None:
    assert [literal({1: 0}), literal({True: 0}), literal({1.0: 0})] == [
        '{"1": 0}',
        '{"True": 0}',
        '{"1.0": 0}',
    ]
