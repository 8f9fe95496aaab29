"""engine/makers: when an action wants a subject another tool makes, which tools may make it, and how one is called."""

from __future__ import annotations

from mcp_confirm_audit.engine import makers
from mcp_confirm_audit.engine.controls import ControlOutcome
from mcp_confirm_audit.models import ControlResult, Signatures
from mcp_confirm_audit.target.discovery import ToolPlan
from mcp_confirm_audit.target.driver import ToolInfo

HANDOFF = ToolInfo(
    "handoff",
    "Record a boundary; the person is asked once about every note still staged (keep all / pick / later).",
    {"type": "object", "properties": {"trigger": {"type": "string"}}},
    None,
    None,
)
STAGE = ToolInfo(
    "stage",
    "Draft a note.",
    {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
    None,
    None,
)
PENDING = ToolInfo("pending", "What waits.", {}, True, None)
KEEP = ToolInfo("keep", "Keep a note the person said yes to.", {}, False, None)
CREATE = ToolInfo("create_folder", "A folder.", {}, False, None)
PLAN = ToolPlan("handoff", None, path_styles=("value",))


def outcome(*, unlearned: str = "", inert: bool = False) -> ControlOutcome:
    approve = ControlResult("handoff", "approve", True, True, "asked, accepted, acted")
    return ControlOutcome("value", (approve,), (), signatures=Signatures(unlearned=unlearned), inert=inert)


def test_a_subject_is_wanted_where_a_refusal_control_found_nothing_to_ask_or_the_action_never_asked() -> None:
    assert makers.wants_a_subject(outcome(unlearned="the decline control could not be run"))
    assert makers.wants_a_subject(outcome(inert=True))
    assert not makers.wants_a_subject(outcome())


def test_makers_named_in_the_actions_description_come_first_never_a_reader() -> None:
    tools = [CREATE, PENDING, KEEP, HANDOFF, STAGE]
    # "staged" names stage, a maker by its name too; "keep all" names keep; create_folder is a maker by
    # its name only; pending reads. Two at most.
    assert [t.name for t in makers.candidates(PLAN, tools)] == ["stage", "keep"]
    assert [t.name for t in makers.candidates(PLAN, [CREATE, PENDING, HANDOFF])] == ["create_folder"]


def test_a_maker_is_called_as_its_own_plan_calls_it_else_with_its_required_arguments_never_varied() -> None:
    learned = ToolPlan("stage", None, extra_args={"title": "t", "store": "playbooks"}, path_styles=("value",))
    step = makers.setup_call(STAGE, [learned], {})
    assert (step.tool, dict(step.args), dict(step.save)) == (
        "stage",
        {"title": "t", "store": "playbooks"},
        {},
    )
    assert step.fixed == frozenset({"title", "store"})
    alone = makers.setup_call(STAGE, [], {})
    assert set(alone.args) == {"title"}
    assert alone.fixed == frozenset({"title"})
