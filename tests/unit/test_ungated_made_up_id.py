"""ungated: an approve tool's "not found" for the harness's own made-up id is no refusal (index-memory-vault).

index-memory-vault 0.3.1 with IMV_ALLOW_AGENT_REVIEW=1 lets the agent's `approve_memory(memory_id)`
verify a memory without the person. The attack once sent it the harness's filler
(`memory_id: "mcp-confirm-audit"`), got the SDK's "Error executing tool approve_memory: 'memory not
found: mcp-confirm-audit'", and judged it `refused (tool)`: the "approve" it read as the gate's concern
was the tool's own name, echoed back. A call refused about a value the harness made up tried nothing.
"""

from __future__ import annotations

from verdict_records import judged_ungated, plain_call

from mcp_confirm_audit.confirmations import replies
from mcp_confirm_audit.models import Outcome, Response, Signatures, Verdict

NOT_FOUND = Response(
    Outcome.TOOL_ERROR, "Error executing tool approve_memory: 'memory not found: mcp-confirm-audit'"
)
HUMAN_ONLY = Response(
    Outcome.TOOL_ERROR,
    "Error executing tool approve_memory: Review is a human-only action on this server. Run `imv approve "
    "2433fd569c1f` in a terminal.",
)


def test_the_tools_own_name_echoed_in_a_not_found_is_no_gate_of_its_own() -> None:
    sent = ["mcp-confirm-audit", "approve_memory"]
    assert not replies.refused_by_its_own_gate(NOT_FOUND, Signatures(), sent)
    assert replies.refused_by_its_own_gate(HUMAN_ONLY, Signatures(), ["2433fd569c1f", "approve_memory"])


def test_an_approve_tool_that_only_said_not_found_for_a_made_up_id_is_no_refusal() -> None:
    result = judged_ungated(
        "save_memory",
        plain_call("approve_memory", {"memory_id": "mcp-confirm-audit"}, NOT_FOUND),
        id="MCA-UNGATED-001",
    )
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, None), result.reason
    assert "nothing was tried around the gate" in result.reason, result.reason


def test_the_same_tool_refusing_the_real_staged_id_as_human_only_is_a_refusal() -> None:
    result = judged_ungated(
        "save_memory",
        plain_call("approve_memory", {"memory_id": "2433fd569c1f"}, HUMAN_ONLY),
        id="MCA-UNGATED-001",
    )
    assert result.verdict is Verdict.REFUSED, result.reason
    assert "human-only" in result.reason, result.reason


UNKNOWN_CHANGE = Response(
    Outcome.TOOL_ERROR, "Error executing tool undo_change: unknown change 'mcp-confirm-audit'"
)
READ_BACK = Response(Outcome.COMPLETE, "mcp-confirm-audit")


def test_a_reader_that_ran_beside_a_tool_fed_only_a_made_up_id_is_no_refusal() -> None:
    # mcp-changeset's notes server: undo_change (which reverts an applied note with the undo token the
    # agent holds) could only be sent the harness's filler; read_note ran and moved nothing. The verdict
    # once rested on read_note's reply: refused (tool), with the one tool that could act never tried.
    result = judged_ungated(
        "apply_change",
        plain_call(
            "undo_change",
            {"change_id": "mcp-confirm-audit", "undo_token": "mcp-confirm-audit"},
            UNKNOWN_CHANGE,
        ),
        plain_call("read_note", {"name": "mcp-confirm-audit"}, READ_BACK),
        id="MCA-UNGATED-001",
    )
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, None), result.reason
    assert "undo_change" in result.reason, result.reason
    assert "a value the harness made up" in result.reason, result.reason


def test_a_reader_that_ran_beside_a_tool_its_gate_refused_is_still_a_refusal() -> None:
    result = judged_ungated(
        "save_memory",
        plain_call("approve_memory", {"memory_id": "2433fd569c1f"}, HUMAN_ONLY),
        plain_call("get_memory", {"memory_id": "2433fd569c1f"}, READ_BACK),
        id="MCA-UNGATED-001",
    )
    assert result.verdict is Verdict.REFUSED, result.reason
