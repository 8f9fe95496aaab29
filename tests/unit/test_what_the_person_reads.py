"""Whether what the person reads before approving is known: the steps that show it, or the agent's relay.

A person who approves on their own channel reads only what their steps show them: with no such step,
prompt-forging has nothing to judge (`_flows.unseen_request`), never the reply the agent's call got.
"""

from __future__ import annotations

import re

import pytest

from mcp_confirm_audit.channels.command import Command
from mcp_confirm_audit.channels.human import Person
from mcp_confirm_audit.channels.read import Read
from mcp_confirm_audit.confirmations.base import AgentFlow
from mcp_confirm_audit.confirmations.pending import CallTemplate, Pending
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.confirmations.waits import Waits
from mcp_confirm_audit.techniques._flows import unseen_request

APPROVE = Command("imv approve {id}")
SHOW = Command("imv show {id}", shows=True)
CODE = Read("stderr", pattern=re.compile(r"pairing code (\d{6})"), secret=True)
WEBHOOK = Read("sink", json_path="approve_url")


@pytest.mark.parametrize(
    "flow",
    [
        Pending(tool="save_memory", human=Person((APPROVE,))),
        # A credential read shows the person nothing about the request.
        Pending(tool="save_memory", human=Person((CODE, APPROVE))),
        # A step that shows after the approving one is read too late.
        Pending(tool="save_memory", human=Person((APPROVE, SHOW))),
        # A challenge the person signs on their own channel: what they read there is not declared.
        Token(tool="drain_tank", into="approval", human=Person((Command("sign {challenge}", kind="sign"),))),
    ],
    ids=["approve-command-alone", "secret-read-first", "show-after-approving", "signed-challenge"],
)
def test_a_person_on_their_own_channel_shown_nothing_leaves_the_question_unknown(flow: AgentFlow) -> None:
    reason = unseen_request(flow)
    assert reason is not None
    assert reason.startswith("nothing shows the person the request")
    assert "shows: true" in reason


@pytest.mark.parametrize(
    "flow",
    [
        Pending(tool="save_memory", human=Person((SHOW, APPROVE))),
        Pending(tool="delete_file", human=Person((WEBHOOK, APPROVE))),
        # Through the agent: its own approve tool, or a token it redeems; the agent relays the preview.
        Pending(tool="delete_file", approve=CallTemplate("approve", {"pending_id": "{id}"})),
        Token(tool="delete_file"),
        # A call that waits shows its prompt while it waits: checked where its decline steps read it.
        Waits(tool="delete_file", human=Person((APPROVE,))),
    ],
    ids=["show-first", "webhook-read", "agent-approve-tool", "token", "waits"],
)
def test_what_the_person_reads_is_known(flow: AgentFlow) -> None:
    assert unseen_request(flow) is None
