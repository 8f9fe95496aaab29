"""What `init` writes when the honest flow failed: the control's advice whole enough, and a fix that fits it.

Trial 14: on a server whose person answers on the server's own terminal, the approve control's detail
rightly said to play that person (`tty: true` with a waits flow). `init` cut it at 400 characters with
no mark of the cut, mid-word, then told the reader to "set args:" and drafted made-up arguments: the
one advice that was right, buried under one that was wrong.
"""

from __future__ import annotations

from mcp_confirm_audit.channels.human import CHANNELS_PAGE
from mcp_confirm_audit.cli.init_profile import _failed
from mcp_confirm_audit.engine.controls import ControlOutcome
from mcp_confirm_audit.engine.search import Searched
from mcp_confirm_audit.models import ControlResult

TOOL = "cancel_order"
GAVE_UP = Searched(
    None, ("attempt 1",), gave_up="cancel_order's refusal names no rule the harness can follow"
)


def _outcome(detail: str) -> ControlOutcome:
    return ControlOutcome(None, (ControlResult(TOOL, "approve", False, True, detail),), (), search=GAVE_UP)


def test_a_refusal_that_names_an_approver_is_fixed_on_the_persons_channel_not_in_args() -> None:
    detail = (
        "value: did not ask (tool-error: 'cancel_order' was refused by the approver.); the refusal names an "
        "approver: if a person answers elsewhere (a terminal prompt, a device, a link), say how in the "
        "profile (tty: true with confirmation: {kind: waits, waits: {human: [...]}}, or a pending or token "
        f"flow with human: steps; see {CHANNELS_PAGE})"
    )
    written = "\n".join(_failed(_outcome(detail)))
    assert "channels.md" in written  # the pointer survives: the advice is whole
    assert "…" not in written
    assert "# Fix: say how the person answers on their own channel" in written
    assert "# Fix: set args:" not in written


def test_a_refusal_of_the_harnesss_arguments_is_fixed_in_args_and_a_long_detail_is_cut_visibly() -> None:
    detail = (
        "value: did not ask (tool-error: Input validation error: 'order_id' is a required property) " * 12
    )
    written = "\n".join(_failed(_outcome(detail)))
    assert "# Fix: set args: (the values the server accepts) and setup:" in written
    assert "…" in written  # a cut says it is one


def test_a_tool_that_acted_with_nobody_asked_is_told_where_a_mode_or_a_use_that_asks_goes() -> None:
    # Trial 16, openmymemo 0.3.1: an addition applies at once unless the person turned approval on (or the
    # memory is one they wrote). The draft said only "Until it works every attack is inconclusive".
    detail = "the tool acted without asking for confirmation (root/MEMORY.md, root/memories/identity.md)"
    outcome = ControlOutcome("value", (ControlResult("memory_propose", "approve", False, True, detail),), ())
    written = "\n".join(_failed(outcome))
    assert (
        "# Fix: it acted with nobody asked: if the server asks only in some mode or for some uses" in written
    )
    assert "start it in that mode (command:) or make that use (args:, setup:)" in written


def test_a_refusal_is_never_told_it_acted_with_nobody_asked() -> None:
    detail = "value: did not ask (tool-error: Input validation error: 'order_id' is a required property)"
    written = "\n".join(_failed(_outcome(detail)))
    assert "acted with nobody asked" not in written
