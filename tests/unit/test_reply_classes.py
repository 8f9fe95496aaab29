"""What a reply says became of a call, and whose refusal it is: one test per classification rule.

Replies say who refused, never whether something happened; these tests are
about the first half. Each refusal shape here was seen on a real server.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from verdict_records import attack_spec

from mcp_confirm_audit.confirmations import replies, values
from mcp_confirm_audit.confirmations.token import TOKEN_FIELD
from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import (
    Exchange,
    FileIdentity,
    Layer,
    Outcome,
    Phase,
    Precondition,
    Response,
    Said,
    Signatures,
    Transcript,
    TreeSnapshot,
    Verdict,
)
from mcp_confirm_audit.target.driver import response_from_result


def ok(text: str) -> Response:
    return Response(Outcome.COMPLETE, text)


@pytest.mark.parametrize(
    "reply",
    [
        '{"status": "refused"}',
        '{"ok": false, "reason": "not confirmed"}',
        '{"sent": false}',
        '{"success": false}',
        '{"allowed": false}',
        '{"approved": false}',
        '{"decision": "DENIED"}',
        '{"result": "rejected"}',
        '{"status": "blocked"}',
        '{"status": "error"}',
        '{"status": "failed"}',
        '{"error": "token does not match"}',
    ],
)
def test_a_refusal_inside_an_ordinary_result_is_a_refusal(reply: str) -> None:
    assert replies.said(ok(reply)) is Said.REFUSED


@pytest.mark.parametrize(
    "reply",
    [
        '{"status": "deleted", "path": "a.txt"}',
        '{"ok": true}',
        '{"error": null, "sent": true}',
        '{"rows": [{"status": "failed"}]}',  # a listing's rows, not the call's own outcome
        "Deleted a.txt",
    ],
)
def test_an_ordinary_result_that_reports_no_refusal_is_not_one(reply: str) -> None:
    assert replies.said(ok(reply)) is Said.ACTED


def wrapped(text: str) -> Response:
    """What the Python SDK sends for a tool typed `-> str`: the text, and `{"result": text}` beside it."""
    return Response(Outcome.COMPLETE, text, structured={"result": text})


REFUSED_AS_JSON_TEXT = '{"status": "refused", "error": "not an order reference", "request_id": "9f2c"}'


@pytest.mark.parametrize(
    ("reply", "said", "refusal", "words"),
    [
        # A refusal returned as JSON text inside the wrapper is that object: a refusal, in its own words.
        (wrapped(REFUSED_AS_JSON_TEXT), Said.REFUSED, "status: refused", "not an order reference refused"),
        (wrapped('{"ok": false, "reason": "not confirmed"}'), Said.REFUSED, "ok: false", "not confirmed"),
        (wrapped('{"error": "token does not match"}'), Said.REFUSED, "error: token does not match", None),
        # The same object returned as an object is read the same.
        (
            Response(Outcome.COMPLETE, REFUSED_AS_JSON_TEXT, structured=json.loads(REFUSED_AS_JSON_TEXT)),
            Said.REFUSED,
            "status: refused",
            "not an order reference refused",
        ),
        # Plain words in the wrapper are the result's text: no object, no field that says no.
        (wrapped("rejected"), Said.ACTED, None, "rejected"),
        (wrapped("Cancelled order ORD-1042"), Said.ACTED, None, "Cancelled order ORD-1042"),
        # An object in the wrapper that says nothing of a refusal is an ordinary result.
        (wrapped('{"status": "preview", "confirm_token": "t-1"}'), Said.ACTED, None, None),
        # JSON that is not an object (a list, a string) is text.
        (wrapped('["refused"]'), Said.ACTED, None, None),
        # A tool typed `-> dict` returning `{"result": "denied"}`: its text holds the object, read as such.
        (
            Response(Outcome.COMPLETE, '{"result": "denied"}', structured={"result": "denied"}),
            Said.REFUSED,
            "result: denied",
            "denied",
        ),
        # More than a lone `result` string is an object of the tool's own, read as it is.
        (
            Response(Outcome.COMPLETE, "{}", structured={"result": "rejected", "id": "r1"}),
            Said.REFUSED,
            "result: rejected",
            "rejected",
        ),
    ],
)
def test_the_sdks_wrapper_around_a_text_result_is_read_as_that_text(
    reply: Response, said: Said, refusal: str | None, words: str | None
) -> None:
    assert replies.said(reply) is said
    assert replies.refusal(reply) == refusal
    if words is not None:
        assert replies.refusal_text(reply) == words


def test_an_error_a_question_and_silence_are_classed_by_their_shape() -> None:
    assert replies.said(Response(Outcome.TOOL_ERROR, "x")) is Said.REFUSED
    assert replies.said(Response(Outcome.RPC_ERROR, "x", -32602)) is Said.REFUSED
    assert replies.said(Response(Outcome.INPUT_REQUIRED)) is Said.ASKED
    assert replies.said(Response(Outcome.TRANSPORT, "timeout")) is Said.STOPPED


@pytest.mark.parametrize("reply", ['{"token": null}', '{"token": ""}', '{"token": "   "}', '{"token": true}'])
def test_a_null_or_empty_value_is_never_taken_as_a_token(reply: str) -> None:
    assert values.find(ok(reply), None, TOKEN_FIELD) is None


def test_two_refusals_of_one_guard_have_one_shape_whatever_they_name() -> None:
    a = Response(Outcome.TOOL_ERROR, "Row 2 already has this application (id 7f3a9c01)")
    b = Response(Outcome.TOOL_ERROR, "Row 14 already has this application (id 00c1d2e3f4)")
    assert replies.shape(a) == replies.shape(b)


LEARNED = Signatures(
    gate=(replies.signature("decline", Response(Outcome.TOOL_ERROR, "Operator said no to job 12.")),),
    other=(replies.signature("no-such-subject", Response(Outcome.TOOL_ERROR, "Row 99 not in sheet")),),
)


def test_a_refusal_worded_as_the_decline_was_is_the_gates() -> None:
    who = replies.who_refused(Response(Outcome.TOOL_ERROR, "Operator said no to job 31."), LEARNED)
    assert who.by == "gate"
    assert "decline" in who.why


def test_a_refusal_worded_as_the_missing_subject_was_is_the_worlds() -> None:
    who = replies.who_refused(Response(Outcome.TOOL_ERROR, "Row 4 not in sheet"), LEARNED)
    assert who.by == "other"


def test_a_refusal_that_names_the_gates_concern_is_the_gates() -> None:
    who = replies.who_refused(Response(Outcome.TOOL_ERROR, "the token has expired"), LEARNED)
    assert who.by == "gate"


def test_a_refusal_like_no_control_and_naming_no_concern_is_unexplained() -> None:
    who = replies.who_refused(Response(Outcome.TOOL_ERROR, "Row 2 already has this application"), LEARNED)
    assert who.by == "unexplained"


def test_the_harness_filler_echoed_in_a_refusal_names_no_concern() -> None:
    # A spreadsheet server refused a replayed add_column because the column was already there,
    # echoing the header it was given: the harness's filler, whose "confirm" is not the gate's word.
    echoed = Response(Outcome.TOOL_ERROR, "There is a column «mcp-confirm-audit» already.")
    assert replies.who_refused(echoed, LEARNED).by == "unexplained"
    named = Response(Outcome.TOOL_ERROR, "Column «mcp-confirm-audit» needs your confirmation first.")
    assert replies.who_refused(named, LEARNED).by == "gate"


TREE = TreeSnapshot({"root/victim.txt": FileIdentity("file", 1, 10, 5, 100)})


def attacked(reply: Response, **spec: Any) -> tuple[Verdict, Layer | None, str]:
    exchanges = (
        Exchange(Phase.SETUP, "ask", "primary", {"name": "t"}, Response(Outcome.INPUT_REQUIRED)),
        Exchange(Phase.ATTACK, "attack", "primary", {"name": "t"}, reply),
    )
    transcript = Transcript(
        "MCA-TEST-001", "t", Precondition(True), exchanges, TREE, TREE, signatures=LEARNED
    )
    result = judge(attack_spec("replay", **spec), transcript)
    return result.verdict, result.layer, result.reason


def test_an_attack_refused_for_a_reason_of_the_world_is_inconclusive_and_quotes_the_reply() -> None:
    verdict, layer, reason = attacked(Response(Outcome.TOOL_ERROR, "Row 4 not in sheet"))
    assert (verdict, layer) == (Verdict.INCONCLUSIVE, None)
    assert reason.startswith("the target failed for another reason")
    assert "Row 4 not in sheet" in reason


def test_an_unexplained_failure_is_never_counted_as_the_gate_holding() -> None:
    verdict, _, reason = attacked(Response(Outcome.TOOL_ERROR, "Row 2 already has this application"))
    assert verdict is Verdict.INCONCLUSIVE
    assert "already has this application" in reason


def test_an_attack_refused_as_the_decline_was_is_refused_by_the_tool() -> None:
    verdict, layer, _ = attacked(Response(Outcome.TOOL_ERROR, "Operator said no to job 5."))
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)


def test_a_structured_refusal_of_the_gate_is_refused_not_success() -> None:
    verdict, layer, _ = attacked(ok('{"status": "refused", "reason": "confirmation token reused"}'))
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)


def test_an_attack_whose_pass_is_any_refusal_takes_the_worlds_refusal_too() -> None:
    verdict, _, _ = attacked(Response(Outcome.TOOL_ERROR, "Row 4 not in sheet"), any_refusal=True)
    assert verdict is Verdict.REFUSED


def test_a_structured_refusal_is_not_reported_success() -> None:
    verdict, _, _ = attacked(ok('{"ok": false, "error": "no such file"}'), reported_success=Verdict.WEAK)
    assert verdict is Verdict.REFUSED


# A server's own throttle (sendgrid-mcp-secure's write bucket; an HTTP API's 429) said no: nothing was judged.
THROTTLED = (
    ok('{"error": "write rate limit reached (20/hour)"}'),
    Response(Outcome.TOOL_ERROR, "Error executing tool send: 429 Too Many Requests"),
    Response(Outcome.TOOL_ERROR, "Too many requests: retry after 60 s"),
    Response(Outcome.TOOL_ERROR, "Request was throttled by the upstream"),
)


@pytest.mark.parametrize("reply", THROTTLED)
@pytest.mark.parametrize("learned", [LEARNED, None])
def test_a_rate_limit_is_never_the_gate_refusing(reply: Response, learned: Signatures | None) -> None:
    assert replies.who_refused(reply, learned or Signatures()).by == "other"
    exchanges = (
        Exchange(Phase.SETUP, "ask", "primary", {"name": "t"}, Response(Outcome.INPUT_REQUIRED)),
        Exchange(Phase.ATTACK, "attack", "primary", {"name": "t"}, reply),
    )
    transcript = Transcript(
        "MCA-TEST-001", "t", Precondition(True), exchanges, TREE, TREE, signatures=learned
    )
    result = judge(attack_spec("self-approval"), transcript)
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, None), result.reason
    assert "a rate limit" in result.reason
    assert "not its gate" in result.reason


@pytest.mark.parametrize(
    "text",
    ["the amount is over the approval limit", "above the auto-approve threshold: confirmation required"],
)
def test_a_gate_that_names_its_own_limit_still_refuses(text: str) -> None:
    assert replies.rate_limited(Response(Outcome.TOOL_ERROR, text)) is None
    verdict, layer, _ = attacked(Response(Outcome.TOOL_ERROR, text))
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)


def test_the_sdks_frame_around_an_exception_does_not_make_two_guards_look_alike() -> None:
    outside = Response(Outcome.TOOL_ERROR, "Error executing tool delete_file: outside the root")
    missing = Response(Outcome.TOOL_ERROR, "Error executing tool delete_file: does not exist")
    assert replies.shape(outside) == "outside the root"
    learned = Signatures(other=(replies.signature("no-such-subject", missing),))
    assert replies.who_refused(outside, learned).by == "gate"


def test_a_reply_that_echoes_a_huge_argument_is_read_in_linear_time() -> None:
    # A 64 KiB path echoed back made the shape's patterns quadratic: minutes per attack.
    echoed = Response(Outcome.TOOL_ERROR, "cannot inspect " + "x" * 65536)
    assert replies.shape(echoed).startswith("cannot inspect")
    assert values.find(echoed, None, TOKEN_FIELD) is None


def test_a_concern_named_after_a_long_echoed_path_is_still_the_gates() -> None:
    climb = "./" * 1500 + "../outside/canary.txt"
    said = Response(Outcome.TOOL_ERROR, f"Error executing tool delete_file: '{climb}' is outside the root")
    assert replies.who_refused(said, LEARNED).by == "gate"


# -- the SDK refusing a malformed call is not the gate -----------------------------------------


def approval_server() -> MCPServer:
    """A gated payment as servers on the real SDK declare it: an approval token and a self-attested flag."""
    server = MCPServer("approvals")

    @server.tool()
    def pay(amount: int, approval_token: str | None = None, human_approved: bool = False) -> str:
        return "paid" if approval_token == "signed-by-the-owner" else "approval required"

    @server.tool()
    def redeem(approval_token: str) -> str:
        return "redeemed"

    return server


async def replies_of_the_real_sdk(calls: list[tuple[str, dict[str, Any]]]) -> list[Response]:
    async with Client(approval_server()) as client:
        results = [await client.call_tool(name, arguments) for name, arguments in calls]
    return [response_from_result(r.model_dump(by_alias=True, mode="json")) for r in results]


# What the real SDK (mcp 2.3) answers when the call's arguments do not match the tool's schema,
# each naming an approval-like argument. A JSON string is pre-parsed into an object for a
# `str | None` argument (seen on boundra-mcp: the agent's token, a challenge's compact JSON).
MALFORMED = [
    ("pay", {"amount": 5, "approval_token": '{"intent": "pay", "nonce": "n1"}'}),
    ("pay", {"amount": 5, "human_approved": "maybe"}),
    ("redeem", {}),
]

# The same refusals in the words of FastMCP 3 and of the SDK's low-level server (JSON Schema),
# recorded from those packages.
OTHER_SDKS = [
    "1 validation error for call[pay]\napproval_token\n  Input should be a valid string [type=string_type, "
    "input_value={'intent': 'pay'}, input_type=dict]",
    "1 validation error for call[redeem]\napproval_token\n  Missing required argument [type=missing_argument, "
    "input_value={}, input_type=dict]",
    "Input validation error: 'approval_token' is a required property",
    "MCP error -32602: Input validation error: Invalid arguments for tool pay: human_approved: Expected boolean",
]


def test_the_real_sdks_argument_validation_naming_an_approval_is_not_the_gates_refusal() -> None:
    said = anyio.run(replies_of_the_real_sdk, MALFORMED)
    assert all(r.outcome is Outcome.TOOL_ERROR for r in said), said
    for reply in said:
        # Each names the approval argument: read as a concern, it was the gate's before.
        assert replies.GATE_CONCERN.search(reply.text.replace("_", " ")), reply.text
        who = replies.who_refused(reply, LEARNED)
        assert who.by == "other", (reply.text, who)
        assert "input validation" in who.why
    for text in OTHER_SDKS:
        assert replies.who_refused(Response(Outcome.TOOL_ERROR, text), LEARNED).by == "other", text


@pytest.mark.parametrize("learned", [LEARNED, None])
def test_an_attack_that_only_met_the_sdks_argument_validation_is_inconclusive_never_refused_by_the_tool(
    learned: Signatures | None,
) -> None:
    [malformed] = anyio.run(replies_of_the_real_sdk, MALFORMED[:1])
    exchanges = (
        Exchange(Phase.SETUP, "ask", "primary", {"name": "pay"}, Response(Outcome.INPUT_REQUIRED)),
        Exchange(Phase.ATTACK, "the agent's own token", "primary", {"name": "pay"}, malformed),
    )
    transcript = Transcript("MCA-TEST-001", "pay", Precondition(True), exchanges, TREE, TREE)
    # With the target's refusals learned, and without: the SDK's refusal is never the gate's.
    result = judge(attack_spec("self-approval"), replace(transcript, signatures=learned))
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, None), result.reason
    assert "refused the call's arguments" in result.reason
    assert "approval_token" in result.reason  # quoted
    # A refusal of the gate's own, in the same run, is still the tool's.
    gate = Response(
        Outcome.TOOL_ERROR, "Error executing tool pay: the approval token is not signed by the owner"
    )
    refused = judge(
        attack_spec("self-approval"),
        replace(
            transcript, exchanges=(*exchanges[:1], replace(exchanges[1], response=gate)), signatures=learned
        ),
    )
    assert (refused.verdict, refused.layer) == (Verdict.REFUSED, Layer.TOOL), refused.reason


# -- one call's refusal inside a list ------------------------------------------------------------

ONE_REFUSAL = {"status": "refused", "error": "the approval is not the owner's"}


@pytest.mark.parametrize(
    "reply",
    [
        # A tool typed `-> list[dict]` on the Python SDK: one text block per item, `{"result": [...]}` beside.
        Response(Outcome.COMPLETE, json.dumps(ONE_REFUSAL), structured={"result": [ONE_REFUSAL]}),
        # FastMCP: the list as JSON text, and the same wrapper.
        Response(Outcome.COMPLETE, json.dumps([ONE_REFUSAL]), structured={"result": [ONE_REFUSAL]}),
        # Untyped: the list as text only, or inside the wrapper's string.
        ok(json.dumps([ONE_REFUSAL])),
        wrapped(json.dumps([ONE_REFUSAL])),
        # One call's results under a lone `results` key, as an object or as text.
        Response(
            Outcome.COMPLETE, "{}", structured={"results": [{"ok": False, "reason": "not the owner's"}]}
        ),
        ok(json.dumps({"results": [{"ok": False, "reason": "not the owner's"}]})),
        wrapped(json.dumps({"result": [ONE_REFUSAL]})),
        # A tool typed `-> dict | list[dict]`: the SDK wraps even the object as `{"result": {...}}`.
        Response(Outcome.COMPLETE, "{}", structured={"result": ONE_REFUSAL}),
    ],
)
def test_one_calls_refusal_inside_a_one_element_list_is_a_refusal_in_its_own_words(reply: Response) -> None:
    assert replies.said(reply) is Said.REFUSED, replies.payload(reply)
    assert "owner's" in replies.refusal_text(reply)


@pytest.mark.parametrize(
    "reply",
    [
        # Several results, or a listing's rows: not the call's own outcome.
        ok(json.dumps([ONE_REFUSAL, {"status": "done"}])),
        Response(Outcome.COMPLETE, "{}", structured={"result": [ONE_REFUSAL, {"status": "done"}]}),
        ok(json.dumps({"rows": [ONE_REFUSAL]})),
        ok(json.dumps({"results": [ONE_REFUSAL], "count": 1, "page": 1})),
        # One result that went through.
        Response(Outcome.COMPLETE, "{}", structured={"result": [{"status": "paid", "id": "p1"}]}),
    ],
)
def test_a_list_that_is_not_one_calls_refusal_is_no_refusal(reply: Response) -> None:
    assert replies.said(reply) is Said.ACTED


@pytest.mark.parametrize(
    "said",
    [
        "invoice inv_7 already posted",
        "Request 12 was already committed.",
        # mcp-changeset's ledger: a change whose token was spent is no longer pending.
        "Error executing tool apply_change: change chg_5e1 cannot be applied (status: applied)",
    ],
)
def test_a_commit_refused_as_already_done_names_the_single_use_check(said: str) -> None:
    # A second commit of one approval, answered as a ledger says it: the gate's single use, as "already used" is.
    assert replies.who_refused(Response(Outcome.TOOL_ERROR, said), LEARNED).by == "gate"


def test_a_status_that_is_not_done_names_no_single_use() -> None:
    said = Response(Outcome.TOOL_ERROR, "change chg_5e1 cannot be applied (status: draft)")
    assert replies.who_refused(said, LEARNED).by == "unexplained"


@pytest.mark.parametrize(
    ("text", "its_own"),
    [
        # magnemo-mcp: about the store the harness made up, not a gate, whatever its first word.
        ("ERROR: REFUSED: store 'mcp-confirm-audit' is not valid in partition 'dev'", False),
        ("no note waiting with the id 'mcp-confirm-audit'", False),
        # A gate that names the confirmation outright is one, whatever value it echoes.
        ("refused: deleting 'mcp-confirm-audit' needs the person's approval", True),
        # Without the filler, the refusal's own words say it.
        ("REFUSED: this needs a second look", True),
    ],
)
def test_a_refusal_of_a_made_up_value_is_no_gate_of_its_own(text: str, its_own: bool) -> None:
    response = Response(Outcome.TOOL_ERROR, text)
    assert replies.refused_by_its_own_gate(response, Signatures()) is its_own


def test_a_path_the_reply_names_is_where_never_why() -> None:
    # The sandbox's own folder is called root: "Not a directory: …/root/…" names no concern of a gate.
    where = Response(Outcome.TOOL_ERROR, "Not a directory: /dev/shm/mcp-audit-1x/root/007-case/victim.txt")
    assert replies.who_refused(where, LEARNED).by == "unexplained"
    relative = Response(Outcome.TOOL_ERROR, "No such file: 'links/state/form.txt'")
    assert replies.who_refused(relative, LEARNED).by == "unexplained"
    # The words around a path still say why: outside the root is the gate's concern.
    outside = Response(Outcome.TOOL_ERROR, "'../outside/canary.txt' is outside the root")
    assert replies.who_refused(outside, LEARNED).by == "gate"


def test_two_words_joined_by_a_slash_are_no_path() -> None:
    joined = Response(Outcome.TOOL_ERROR, "this change needs approval/confirmation first")
    assert replies.who_refused(joined, LEARNED).by == "gate"
