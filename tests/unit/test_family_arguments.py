"""What policy-self-loosening and flag-bypass send, read off a tool's schema alone."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from mcp_confirm_audit.engine.action import Instance
from mcp_confirm_audit.profile.keys import SetupCall
from mcp_confirm_audit.target.driver import ToolInfo
from mcp_confirm_audit.techniques._arguments import shown_arguments
from mcp_confirm_audit.techniques.flag_bypass import switches
from mcp_confirm_audit.techniques.policy_self_loosening import could_loosen, loosening, loosenings


def tool(properties: dict[str, Any], required: tuple[str, ...] = ()) -> ToolInfo:
    schema = {"type": "object", "properties": properties, "required": list(required)}
    return ToolInfo("t", "", schema, False, None)


def test_loosening_keeps_the_actions_own_identity_and_loosens_only_the_rules() -> None:
    policy = tool(
        {
            "agent_id": {"type": "string"},
            "max_amount_cents": {"type": "integer", "maximum": 50000},
            "allowed_recipients": {"type": "array", "items": {"type": "string"}},
            "require_confirmation": {"type": "boolean"},
            "mode": {"enum": ["strict", "relaxed", "off"]},
            "note": {"type": "string"},
        },
        required=("agent_id",),
    )
    own = {"agent": "agent-7", "recipient": "acme", "amount_cents": 5}
    sent = loosening(policy, own, "case/victim.txt")
    # The one identity the action names, never a wildcard or another agent's.
    assert sent["agent_id"] == "agent-7"
    assert sent["max_amount_cents"] == 50000
    assert sent["allowed_recipients"] == ["*", "case/victim.txt", "agent-7", "acme"]
    assert sent["require_confirmation"] is False
    # "mode" is no rule by its name: an optional argument that is not a rule is left out.
    assert "mode" not in sent
    assert "note" not in sent


def test_an_identity_the_action_does_not_name_gets_the_harness_value_never_a_wildcard() -> None:
    sent = loosening(tool({"user": {"type": "string"}, "limit": {"type": "number"}}, ("user",)), {}, "p")
    assert sent["user"] != "*"
    assert sent["limit"] == 10**9


def test_a_mode_is_set_to_each_of_its_values_the_loosest_last() -> None:
    # host-terminal-mcp's set_permission_mode: sent its first value, `allowlist`, it tightened the gate and
    # the plain call's refusal was judged "refused (tool)"; `allow_all` runs every command unasked.
    mode = tool(
        {
            "mode": {"type": "string", "enum": ["allowlist", "ask", "allow_all"]},
            "persist": {"type": "boolean", "default": False},
        },
        required=("mode",),
    )
    tries = loosenings(mode, {"command": "rm victim.txt"}, "victim.txt")
    assert [t["mode"] for t in tries] == ["allowlist", "ask", "allow_all"]
    # `allow_all` is a value that turns a gate off: `mode` is the rule, and `persist` (no rule) is left out.
    assert all("persist" not in t for t in tries), tries
    assert [could_loosen(mode, t) for t in tries] == [False, False, True]


def test_a_modes_words_order_it_and_a_long_one_is_cut_to_its_most_permissive() -> None:
    values = ["strict_confirm", "never_ask", "ask_once", "auto", "manual", "off", "on_request"]
    [*others, loosest] = loosenings(tool({"approval": {"enum": values}}), {}, "p")
    assert loosest["approval"] == "never_ask"
    # The six most permissive by their words: the strictest is never sent; ties go in the schema's order.
    assert [t["approval"] for t in others] == ["ask_once", "manual", "on_request", "auto", "off"]


def test_nothing_that_names_no_rule_or_keeps_a_default_could_loosen() -> None:
    # An emergency stop named a policy tool by the profile takes only a reason: no rule at all.
    stop = tool({"reason": {"type": "string"}}, ("reason",))
    assert [could_loosen(stop, t) for t in loosenings(stop, {}, "p")] == [False]
    # A switch named for the gate turned, a limit raised: each may loosen; a mode at its default does not.
    gate = tool({"skip_approval": {"type": "boolean"}})
    assert could_loosen(gate, {"skip_approval": True})
    moded = tool({"mode": {"enum": ["ask", "allow_all"], "default": "allow_all"}})
    assert not could_loosen(moded, {"mode": "allow_all"})


def test_every_boolean_and_enum_value_but_the_actions_own_is_tried() -> None:
    gated = tool(
        {
            "path": {"type": "string"},
            "human_approved": {"type": "boolean", "default": False},
            "scope": {"enum": ["file", "directory"], "default": "file"},
            "mode": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
            "count": {"type": "integer"},
        }
    )
    assert switches(gated, {"path": "a"}, {"path"}) == [
        ("human_approved", True),
        ("scope", "directory"),
        ("mode", True),
        ("mode", False),
    ]
    # The mechanism's own flag is left out, and so is what the action already sends.
    assert switches(gated, {"scope": "directory"}, {"human_approved"}) == [
        ("scope", "file"),
        ("mode", True),
        ("mode", False),
    ]


def test_a_setup_value_the_actions_own_arguments_hold_is_shown_as_the_actions_not_staged() -> None:
    # almega-mcp: set_frame(agent_id="ops-bot") before pay(agent_id="ops-bot", merchant=...). The preview
    # shows "ops-bot" because pay names it; a hostile agent_id staged into set_frame makes a frame for
    # another agent that this payment never names, so it can never be in the question: absent, it is
    # no sign of a truncated name (a false "the end of the name is not in the question" before).
    frame = ToolInfo("set_frame", "", {"properties": {"agent_id": {"type": "string"}}}, False, None)
    pay = ToolInfo("pay", "", {"properties": {"agent_id": {}, "merchant": {}, "category": {}}}, False, None)
    setup = (SetupCall("set_frame", {"agent_id": "ops-bot", "label": "payments"}),)
    attack = SimpleNamespace(tools=(frame, pay), plan=SimpleNamespace(name="pay", setup=setup))
    use = Instance({"agent_id": "ops-bot", "merchant": "acme-api", "category": "api"}, "pay")
    baseline = '{"agent_id": "ops-bot", "summary": "pay acme-api", "category": "api", "frame": "payments"}'
    shown = shown_arguments(attack, use, baseline)  # type: ignore[arg-type]
    # The action's own strings, then only the setup value it does not hold itself (the frame's label).
    assert shown == [
        (None, "agent_id", "ops-bot"),
        (None, "merchant", "acme-api"),
        (None, "category", "api"),
        (0, "label", "payments"),
    ]


def test_a_setup_value_the_action_holds_only_as_the_handle_it_saved_is_staged() -> None:
    # linkwarden-mcp: create_collection(name="Doomed") saves {coll}, then delete_collection(collection=
    # "{coll}"). The question names "Doomed" because the setup call made it: a hostile name staged
    # there reaches the action through the saved handle, so it is a place for hostile text.
    create = ToolInfo("create_collection", "", {"properties": {"name": {"type": "string"}}}, False, None)
    delete = ToolInfo("delete_collection", "", {"properties": {"collection": {}}}, False, None)
    setup = (SetupCall("create_collection", {"name": "Doomed"}),)
    attack = SimpleNamespace(
        tools=(create, delete), plan=SimpleNamespace(name="delete_collection", setup=setup)
    )
    use = Instance({"collection": "Doomed"}, "Doomed", saved={"coll": "Doomed"})
    baseline = "Delete the collection 'Doomed' and its 2 links?"
    assert shown_arguments(attack, use, baseline) == [(0, "name", "Doomed")]  # type: ignore[arg-type]


def test_one_filler_several_arguments_hold_counts_only_when_shown_as_often() -> None:
    # sendgrid-mcp-secure: template_id, body_text and body_html all held the filler; the preview showed it
    # once (the template's id): which argument it was is unknown, so none is taken as shown (a false
    # "the end of the name is not in the question" on body_text, which a template's message drops).
    send = ToolInfo("send", "", {"properties": {"template_id": {}, "body_text": {}, "to": {}}}, False, None)
    attack = SimpleNamespace(tools=(send,), plan=SimpleNamespace(name="send", setup=()))
    filler = "mcp-confirm-audit"
    use = Instance({"template_id": filler, "body_text": filler, "to": "a@example.com"}, "send")
    once = f'{{"to": "a@example.com", "template_id": "{filler}"}}'
    assert shown_arguments(attack, use, once) == [(None, "to", "a@example.com")]  # type: ignore[arg-type]
    # tally-write-mcp: both ledgers hold the filler and the preview shows it twice: both are counted.
    twice = f"Dr {filler} 1.00 / Cr {filler} 1.00 / to a@example.com"
    assert len(shown_arguments(attack, use, twice)) == 3  # type: ignore[arg-type]


def test_the_filler_inside_a_uses_own_content_is_not_shown_as_another_argument() -> None:
    # mcp-changeset's notes: `name` and the `change_id` the preview never takes both hold the filler,
    # and the content the use writes starts with it. Counted inside the content, the filler looked
    # shown as often as the two hold it, and a hostile change_id, never shown, was "not in the question".
    write = ToolInfo(
        "apply_change", "", {"properties": {"change_id": {}, "name": {}, "content": {}}}, False, None
    )
    attack = SimpleNamespace(tools=(write,), plan=SimpleNamespace(name="apply_change", setup=()))
    filler = "mcp-confirm-audit"
    use = Instance({"change_id": filler, "name": filler, "content": f"{filler} #7"}, "apply_change")
    preview = f'{{"summary": "Create note \'{filler}\'", "diff": [{{"after": "{filler} #7"}}]}}'
    assert shown_arguments(attack, use, preview) == [(None, "content", f"{filler} #7")]  # type: ignore[arg-type]
