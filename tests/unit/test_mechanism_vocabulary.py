"""Each mechanism answers for itself what techniques used to ask its class: a table, one row a flow."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_confirm_audit.channels.human import Person
from mcp_confirm_audit.confirmations import AgentFlow, HumanFailed
from mcp_confirm_audit.confirmations.elicitation import Elicitation
from mcp_confirm_audit.confirmations.flag import Flag
from mcp_confirm_audit.confirmations.mrtr import Mrtr
from mcp_confirm_audit.confirmations.pending import CallTemplate, Pending
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.confirmations.waits import Waits

PERSON = Person(approve=())
EXECUTE = CallTemplate("run_action", {"id": "{id}"})
APPROVE = CallTemplate("approve_action", {"id": "{id}"})

# hands_over, waits_for_person, asks_a_person, caller_approves, approval_acts_alone, approves_a_handle,
# stages, agent_presents_the_handle, redeems_the_persons_answer, token_in_the_call
ROWS: list[tuple[str, AgentFlow, tuple[Any, ...]]] = [
    ("token", Token("t"), (None, False, False, False, False, True, False, True, False, True)),
    (
        "challenge",
        Token("t", human=PERSON),
        (PERSON, False, True, False, False, True, False, True, True, True),
    ),
    (
        "pending, approve tool",
        Pending("t", approve=APPROVE),
        (None, False, False, False, True, True, True, True, False, False),
    ),
    (
        "pending, person and execute",
        Pending("t", human=PERSON, execute=EXECUTE),
        (PERSON, False, True, False, False, True, True, True, False, False),
    ),
    (
        "pending, person alone",
        Pending("t", human=PERSON),
        (PERSON, False, True, False, True, True, True, False, False, False),
    ),
    ("flag", Flag("t", arg="approved"), (None, False, False, True, False, False, False, False, False, False)),
    ("waits", Waits("t", human=PERSON), (None, True, True, False, False, False, False, False, False, False)),
]
NAMES = (
    "hands_over",
    "waits_for_person",
    "asks_a_person",
    "caller_approves",
    "approval_acts_alone",
    "approves_a_handle",
    "stages",
    "agent_presents_the_handle",
    "redeems_the_persons_answer",
    "token_in_the_call",
)


@pytest.mark.parametrize(
    ("flow", "expected"), [(flow, expected) for _, flow, expected in ROWS], ids=[r[0] for r in ROWS]
)
def test_each_flow_says_what_it_is_made_of(flow: AgentFlow, expected: tuple[Any, ...]) -> None:
    assert {name: getattr(flow, name) for name in NAMES} == dict(zip(NAMES, expected, strict=True))


def test_what_the_agent_redeems_and_where() -> None:
    args = {"path": "a.txt"}
    assert Token("t", into="confirm").redemption(args, "tok", {}) == (
        "t",
        {"path": "a.txt", "confirm": "tok"},
    )
    # A challenge's answer, saved by the person, is what is redeemed.
    assert Token("t", into="confirm").redemption(args, "tok", {"evidence": "ev"}) == (
        "t",
        {"path": "a.txt", "confirm": "ev"},
    )
    assert Pending("t", human=PERSON, execute=EXECUTE).redemption(args, "p1", {}) == (
        "run_action",
        {"id": "p1"},
    )
    assert Pending("t", human=PERSON).redemption(args, "p1", {}) is None
    assert Flag("t").redemption(args, None, {}) is None
    assert Waits("t").redemption(args, None, {}) is None


def test_only_a_pending_flow_whose_profile_gives_a_decline_step_says_the_person_declines() -> None:
    declines = Person(approve=(), decline=())
    assert Pending("t", human=declines, execute=EXECUTE).person_declines
    assert not Pending("t", human=PERSON, execute=EXECUTE).person_declines
    assert not Pending("t", approve=APPROVE, execute=EXECUTE).person_declines
    for flow in (Token("t", human=declines), Flag("t"), Waits("t", human=declines)):
        assert not flow.person_declines


def test_every_mechanism_names_its_own_arguments_and_tools() -> None:
    assert Token("t", into="confirm").own_arguments == ("confirm",)
    assert Flag("t", arg="approved").own_arguments == ("approved",)
    assert Pending("t", approve=APPROVE, execute=EXECUTE).own_tools == ("approve_action", "run_action")
    for mechanism in (Mrtr("t"), Elicitation("t"), Waits("t"), Flag("t")):
        assert mechanism.own_tools == ()
    for mechanism in (Mrtr("t"), Elicitation("t"), Waits("t"), Pending("t")):
        assert mechanism.own_arguments == ()


@pytest.mark.parametrize(
    "flow", [flow for name, flow, _ in ROWS if name != "waits"], ids=[r[0] for r in ROWS if r[0] != "waits"]
)
def test_only_a_flow_that_waits_runs_a_change_while_the_person_reads(flow: AgentFlow) -> None:
    # Its question is its preview: the change goes between preview and confirm, said in one line.
    async def change() -> None:
        raise AssertionError("never run")

    with pytest.raises(HumanFailed, match="between the preview and the confirming call"):
        anyio.run(flow.confirm_once_read, None, {}, change)  # type: ignore[arg-type]
