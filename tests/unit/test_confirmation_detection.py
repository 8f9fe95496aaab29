"""Zero configuration: the mechanism read off the schemas and the first call's result."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from mcp_confirm_audit.confirmations.detect import (
    NAMED_SWITCH,
    approval_argument,
    approver_argument,
    from_response,
    from_schemas,
    named_switch,
    offered,
    policy_arguments,
    policy_tools,
    switch_advice,
)
from mcp_confirm_audit.confirmations.flag import Flag
from mcp_confirm_audit.confirmations.mrtr import Mrtr
from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.models import Outcome, Question, Response
from mcp_confirm_audit.target.driver import ToolInfo
from mcp_confirm_audit.techniques import mrtr_only

# The file families, and subject-drift: each declares it runs over a preview (`OVER_A_PREVIEW`).
OVER_A_PREVIEW = {
    "symlink-swap",
    "parent-swap",
    "identity-swap",
    "out-of-root",
    "prompt-forging",
    "subject-drift",
}


def tool(name: str, read_only: bool | None = False, description: str = "", **props: str) -> ToolInfo:
    schema = {"type": "object", "properties": {k: {"type": v} for k, v in props.items()}}
    return ToolInfo(name, description, schema, read_only, None)


def result(**fields: object) -> Response:
    return Response(Outcome.COMPLETE, text=json.dumps(fields))


DELETE = tool("delete_file", path="string")


def test_a_token_argument_and_a_dry_run_switch_are_a_token_flow_from_the_schema_alone() -> None:
    found = from_schemas(tool("delete_file", path="string", dry_run="boolean", confirm_token="string"))
    assert found == Token("delete_file", into="confirm_token", preview_args={"dry_run": True})


def test_a_confirmation_argument_is_a_token_only_when_its_description_names_the_tool_that_hands_it_out() -> (
    None
):
    apply = tool(
        "apply_change",
        description="Apply a proposal. Requires the one-time confirmation token from simulate_impact.",
        proposal_id="string",
        confirmation="string",
    )
    apply = ToolInfo(
        apply.name,
        apply.description,
        {**apply.input_schema, "required": ["proposal_id", "confirmation"]},
        False,
        None,
    )
    simulate = tool("simulate_impact", proposal_id="string")
    found = from_schemas(apply, None, [apply, simulate])
    assert found == Token("apply_change", into="confirmation", preview_tool="simulate_impact")
    # A phrase the staging result states (no other tool named): the first call must tell.
    phrase = ToolInfo(
        "confirm_write",
        "Place a staged order: `confirmation` must be the draft's confirmation_phrase_required.",
        apply.input_schema,
        False,
        None,
    )
    assert from_schemas(phrase, None, [phrase, simulate]) is None


def test_a_question_is_mrtr() -> None:
    asked = Response(Outcome.INPUT_REQUIRED, questions=(Question("confirm", "elicitation/create"),))
    assert from_response(asked, DELETE, [DELETE]) == Mrtr("delete_file")


def test_a_pending_id_is_a_pending_flow_approved_and_executed_by_the_tools_named_for_it() -> None:
    tools = [DELETE, tool("approve", action_id="string"), tool("execute_action", action_id="string")]
    found = from_response(result(status="pending_approval", action_id="a1"), DELETE, tools)
    assert isinstance(found, Pending)
    assert found.id_from == "action_id"
    assert found.approve is not None
    assert found.approve.filled("a1") == {"action_id": "a1"}
    assert found.execute is not None
    assert found.execute.tool == "execute_action"


def test_a_waiting_status_without_an_id_field_is_still_pending() -> None:
    found = from_response(result(status="awaiting confirmation"), DELETE, [DELETE])
    assert isinstance(found, Pending)
    # Said once, and true: it never "stages the action under an id" beside every style's "no pending id".
    assert found.describe() == (
        "pending: the call answers that the action waits, and names no id to approve it by; "
        "nobody the harness knows of approves it"
    )


def test_a_waiting_reply_that_echoes_the_calls_own_argument_is_approved_by_it_and_the_call_made_again() -> (
    None
):
    # host-terminal-mcp: `{"status": "needs_approval", "command": C}`, then `approve_command(command,
    # approve: bool)`, then `execute_command(command)` again runs C. The command itself is the handle.
    execute = ToolInfo(
        "execute_command",
        "",
        {"properties": {"command": {"type": "string"}, "working_directory": {"type": "string"}}},
        None,
        None,
    )
    approve = ToolInfo(
        "approve_command",
        "",
        {"properties": {"command": {"type": "string"}, "approve": {"type": "boolean"}}},
        None,
        None,
    )
    waiting = result(status="needs_approval", command="rm victim.txt", message="use approve_command")
    found = from_response(waiting, execute, [execute, approve])
    assert isinstance(found, Pending)
    assert found.id_from == "command"
    assert found.approve is not None
    # The yes is said in the boolean that carries the decision, never the `false` a boolean gets by default.
    assert found.approve.filled("rm victim.txt") == {"command": "rm victim.txt", "approve": True}
    assert found.execute is not None
    assert (found.execute.tool, found.execute.filled("rm victim.txt")) == (
        "execute_command",
        {"command": "rm victim.txt"},
    )
    assert "its own 'command'" in found.describe(), found.describe()
    # No step takes the echoed value back: it is no handle, and the flow stays one that names none.
    alone = from_response(waiting, execute, [execute])
    assert isinstance(alone, Pending)
    assert alone.id_from is None


def test_a_token_field_in_the_result_is_a_token_flow() -> None:
    found = from_response(result(proposal="x", approval_token="t0"), DELETE, [DELETE])
    assert found == Token("delete_file", into="approval_token", token_from="approval_token")


def test_a_refusal_naming_the_approval_argument_is_a_flag() -> None:
    flagged = tool("delete_file", path="string", confirm="boolean")
    refused = Response(Outcome.TOOL_ERROR, text="set confirm: true to delete")
    assert from_response(refused, flagged, [flagged]) == Flag("delete_file", arg="confirm")
    assert approval_argument(tool("x", human_approved="boolean")) == "human_approved"
    assert approval_argument(tool("x", force="boolean")) is None


def test_a_plain_answer_says_nothing() -> None:
    assert from_response(Response(Outcome.COMPLETE, text="Deleted a.txt"), DELETE, [DELETE]) is None


def test_policy_tools_are_read_from_their_input_schema_never_from_words() -> None:
    tools = [
        tool("set_spending_limit", limit_cents="integer"),
        tool("configure", allowed_recipients="array"),
        tool("set_gate", require_confirmation="boolean"),
        tool("set_frame", frame="object"),
        tool("set_policy", auto_approve_under_bytes="integer", agent_id="string"),
        # Named and described like a rule, but takes none: an emergency stop, an unrelated state.
        tool("emergency_stop", description="Safety policy: overrides every limit and rule", reason="string"),
        tool("update_limits_note", description="Edit the allowlist", note="string"),
        tool("get_limits", read_only=True, max_cents="integer"),
        # A listing's `limit` is how many rows come back, read-only declared or not.
        tool("list_requests", limit="integer", status="string"),
        tool("browse", limit="integer", cursor="string"),
    ]
    assert [t.name for t in policy_tools(tools)] == [
        "set_spending_limit",
        "configure",
        "set_gate",
        "set_frame",
        "set_policy",
    ]
    # The identity it is set for is no rule of the gate.
    assert policy_arguments(tools[4]) == ["auto_approve_under_bytes"]
    # The profile's list wins, and an empty one names none.
    assert [t.name for t in policy_tools(tools, ["emergency_stop"])] == ["emergency_stop"]
    assert policy_tools(tools, []) == []


def test_a_mode_with_a_value_that_switches_the_gate_off_is_a_policy_argument_and_a_mode_of_anything_else_is_not() -> (
    None
):
    def moded(name: str, *values: str) -> ToolInfo:
        schema = {"type": "object", "properties": {"mode": {"type": "string", "enum": list(values)}}}
        return ToolInfo(name, "", schema, None, None)

    # host-terminal-mcp: `allow_all` runs every command unasked, whatever the argument is called.
    terminal = moded("set_permission_mode", "allowlist", "ask", "allow_all")
    assert policy_arguments(terminal) == ["mode"]
    assert policy_arguments(moded("set_review", "ask", "never_ask")) == ["mode"]
    # Words any mode may hold say nothing of a gate on their own.
    assert policy_tools([moded("set_compression", "auto", "none"), moded("set_scope", "one", "all")]) == []


def test_the_file_families_run_over_a_token_or_pending_flow_and_only_out_of_root_over_a_flag() -> None:
    for mechanism in (Token("delete_file"), Pending("delete_file")):
        assert all(mrtr_only(family, mechanism) is None for family in OVER_A_PREVIEW)
        # An MRTR family that is not a file family still does not apply.
        assert "not MRTR input requests" in (mrtr_only("replay", mechanism) or "")
    flag = Flag("delete_file", arg="human_approved")
    assert mrtr_only("out-of-root", flag) is None
    for family in OVER_A_PREVIEW - {"out-of-root"}:
        assert "a flag flow has no preview" in (mrtr_only(family, flag) or "")
    assert all(mrtr_only(family, Mrtr("delete_file")) is None for family in OVER_A_PREVIEW)


def test_a_token_named_by_a_dotted_path_is_read_from_inside_the_result_and_only_there() -> None:
    from mcp_confirm_audit.confirmations import values
    from mcp_confirm_audit.confirmations.token import TOKEN_FIELD

    challenge = result(decision="ASK", challenge={"nonce": "3295d4455a0d", "expires": 60})
    assert values.find(challenge, "challenge.nonce", TOKEN_FIELD) == ("challenge.nonce", "3295d4455a0d")
    # A path that is not there is not answered with some other field's value.
    assert values.find(challenge, "challenge.token", TOKEN_FIELD) is None


def test_a_pending_id_handed_out_in_a_json_rpc_errors_data_is_read() -> None:
    from mcp_confirm_audit.confirmations import values
    from mcp_confirm_audit.confirmations.pending import ID_FIELD

    # agentveil-mcp-proxy's approval_required: the record id is in the error's data, not its message.
    refused = Response(
        Outcome.RPC_ERROR,
        text="Approval required. Open the approval page and wait while the user approves or denies.",
        code=-32011,
        data={"status": "approval_required", "record_id": "3ae49e88", "redirect_context": {"x": "y"}},
    )
    assert values.find(refused, "record_id", ID_FIELD) == ("record_id", "3ae49e88")
    # Nothing in it is named like a pending id: detection finds none there.
    assert values.find(refused, None, ID_FIELD) is None


def test_an_argument_naming_who_approves_is_found_by_a_small_rule_and_an_owner_only_where_words_say_so() -> (
    None
):
    named = {
        "approver": "approver",
        "signer_address": "signer_address",
        "reviewed_by": "reviewed_by",
        "authorizerId": "authorizerId",
        "approverKey": "approverKey",
    }
    for argument, found in named.items():
        assert approver_argument(tool("pay", payment_id="string", **{argument: "string"})) == found, argument
    # An owner is an approver only where the tool (or the argument) speaks of approving or signing.
    signing = tool(
        "evaluate_payment", description="retry with approval_token once the user signs", owner="string"
    )
    assert approver_argument(signing) == "owner"
    assert approver_argument(tool("chown", path="string", owner="string")) is None
    # Names that only look alike: who is paid, who the rules are for, a flag.
    assert approver_argument(tool("pay", payee="string", user="string", human_approved="boolean")) is None
    # The profile names it, or says it is not there.
    assert approver_argument(tool("chown", path="string", owner="string"), "owner") == "owner"
    assert approver_argument(signing, "signer") is None


class _Replies:
    """A channel that answers each call with the next reply, and keeps what was sent."""

    def __init__(self, *replies: Response) -> None:
        self.replies = list(replies)
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def call(self, label: str, tool: str, arguments: Mapping[str, Any]) -> Response:
        self.sent.append((tool, dict(arguments)))
        return self.replies.pop(0)

    async def human(self, label: str, steps: Sequence[Any], values: Mapping[str, str]) -> dict[str, str]:
        raise AssertionError("no person is asked")


def test_a_refusal_that_spells_out_dry_run_then_confirm_is_a_token_read_back_from_its_own_field() -> None:
    # tracker-mcp 0.5.2, to a client without elicitation: the refusal names the way in, and the
    # preview hands the token back under the argument's own name (`confirm`), not a `*_token` field.
    write = tool("set_status", row="integer", status="string", dry_run="boolean", confirm="string")
    refusal = Response(
        Outcome.TOOL_ERROR,
        text="Not written: this needs the user's confirmation. Call the tool with dry_run=true, show the user "
        "the changes, and after they agree repeat the call with confirm=<token from that preview>.",
    )
    flow = offered(refusal, write, [write], "mrtr")
    assert isinstance(flow, Token)
    assert (flow.into, dict(flow.preview_args)) == ("confirm", {"dry_run": True})
    channel = _Replies(
        result(dry_run=True, version="v7", confirm="c0ffee12", next="repeat with confirm=<this>")
    )
    shown = anyio.run(flow.preview, channel, {"row": 12, "status": "Interview"})
    assert (shown.field, shown.handle) == ("confirm", "c0ffee12")
    assert channel.sent == [("set_status", {"row": 12, "status": "Interview", "dry_run": True})]
    # A refusal that names no way in offers nothing.
    assert (
        offered(Response(Outcome.TOOL_ERROR, text="The user did not confirm."), write, [write], "mrtr")
        is None
    )


def switches(name: str = "create_order", **props: dict[str, Any]) -> ToolInfo:
    """A tool whose arguments are given as whole schemas (a default, an enum)."""
    schema = {"type": "object", "properties": {"sku": {"type": "string"}, **props}, "required": ["sku"]}
    return ToolInfo(name, "", schema, False, None)


DRY_RUN = {"type": "boolean", "default": True}
# finamatik-ops-mcp 0.1.1's create_order, called with dry_run left at its default.
PREVIEWED = result(
    dry_run=True, preview={"sku": "FILTER-STD"}, next_step="call again with dry_run=false to place the order"
)


def test_a_preview_that_names_its_own_switchs_other_value_is_a_flag_flow_on_that_value() -> None:
    order = switches(dry_run=DRY_RUN)
    found = from_response(PREVIEWED, order, [order], {"sku": "FILTER-STD"})
    assert found == Flag("create_order", arg="dry_run", value=False, source=NAMED_SWITCH)
    for said in ('{"dry_run": false}', "Call again with dry_run set to false.", "dry_run: False"):
        assert named_switch(Response(Outcome.COMPLETE, text=said), order) == ("dry_run", False), said
    approve = switches(confirm={"type": "boolean", "default": False})
    assert named_switch(Response(Outcome.COMPLETE, text="set confirm to true"), approve) == ("confirm", True)
    # An enum the schema declares, named with another of its values.
    mode = switches(mode={"type": "string", "enum": ["preview", "commit"], "default": "preview"})
    assert named_switch(Response(Outcome.COMPLETE, text="re-run with mode='commit'"), mode) == (
        "mode",
        "commit",
    )


def test_a_switch_is_never_invented_nor_taken_from_a_call_that_set_it_nor_turned_the_wrong_way() -> None:
    # The reply names a flag the tool does not take: no flag flow (a sibling's words, price_compost).
    quote = switches("quote_order")
    assert from_response(PREVIEWED, quote, [quote]) is None
    order = switches(dry_run=DRY_RUN)
    # The call set it: the reply echoing a value is about what was sent, not the way in.
    assert named_switch(PREVIEWED, order, {"sku": "x", "dry_run": True}) is None
    # Only the default echoed back: nothing else named.
    assert named_switch(result(dry_run=True, preview={}), order) is None
    # A preview switch only turned off confirms: "pass dry_run=true to preview" is no way in.
    off_by_default = switches(dry_run={"type": "boolean", "default": False})
    assert (
        named_switch(Response(Outcome.COMPLETE, text="pass dry_run=true to preview"), off_by_default) is None
    )
    # No default declared: what "left at its default" means is unknown.
    assert named_switch(PREVIEWED, switches(dry_run={"type": "boolean"})) is None
    # A refusal naming an option is a rule, not the person's yes; one naming the preview switch is the way in.
    overwrite = switches(overwrite={"type": "boolean", "default": False}, dry_run=DRY_RUN)
    refused = Response(Outcome.TOOL_ERROR, text="file exists: pass overwrite=true to replace it")
    assert named_switch(refused, overwrite) is None
    refused = Response(Outcome.TOOL_ERROR, text="not placed: dry_run is on; call with dry_run=false")
    assert named_switch(refused, overwrite) == ("dry_run", False)


def test_a_reply_that_names_a_switch_the_call_set_advises_the_flag_key() -> None:
    order = switches(dry_run=DRY_RUN)
    advice = switch_advice(PREVIEWED, order, {"sku": "x", "dry_run": True})
    assert advice is not None
    assert "confirmation: {kind: flag, flag: {arg: dry_run, value: false}}" in advice
    assert switch_advice(PREVIEWED, switches("quote_order")) is None
