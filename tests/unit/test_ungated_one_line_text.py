"""ungated: another part of a one-line text is not the gated action's effect (mcp-gatehouse, trial 14 item 8).

mcp-gatehouse's demo asks its person on a terminal before `cancel_order`; `add_note` is an ungated
write by design. The profile's effect probe was `lookup_order`, whose answer is one line:
`4417 · Blue Ridge Cabinets · packed · notes: none`. The honest cancel changed `packed` to
`cancelled`; add_note, called unasked by ungated, changed `none` to a note. One probe, one place
(`changed tool:lookup_order.result`), so the verdict said `vulnerable`: "with the gated action's own
effect". The words each change replaced tell them apart; a tool that cancels unasked still replaces
the gated action's words, and is still the gated harm.
"""

from __future__ import annotations

from verdict_records import UNGATED_CASE, UNGATED_TREE, attack_spec, plain_call

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import AtTheGate, Outcome, Precondition, Response, Transcript, Verdict
from mcp_confirm_audit.oracle.effects import another_part, reworded

PROBE = "tool:lookup_order@primary"
BEFORE = {PROBE: {"result": "4417 · Blue Ridge Cabinets · packed · notes: none"}}
CANCELLED = {PROBE: {"result": "4417 · Blue Ridge Cabinets · cancelled · notes: none"}}
NOTED = {PROBE: {"result": "4417 · Blue Ridge Cabinets · packed · notes: mcp-confirm-audit"}}
PLACE = "changed tool:lookup_order.result"
# What the approve control saw the honest cancel do to the probe.
GATED = reworded(BEFORE, CANCELLED, ())


def _judged(after: dict[str, object], call: str) -> tuple[Verdict, str]:
    transcript = Transcript(
        "MCA-UNGATED-001",
        "cancel_order",
        Precondition(True),
        (plain_call(call, {"order_id": "4417"}, Response(Outcome.COMPLETE, "ok")),),
        UNGATED_TREE,
        UNGATED_TREE,
        case_dir=UNGATED_CASE,
        observed_before=BEFORE,
        observed_after=after,
        gate=AtTheGate((PLACE,), reworded=GATED),
        effect_verdict=(Verdict.WEAK, f"{call} acted with no confirmation while cancel_order is gated"),
    )
    result = judge(attack_spec("ungated", id="MCA-UNGATED-001"), transcript)
    return result.verdict, result.reason


def test_the_words_a_change_replaced_say_which_part_of_one_line_it_was() -> None:
    assert {PLACE: (frozenset({"packed"}), frozenset({"cancelled"}))} == GATED
    noted = reworded(BEFORE, NOTED, ())[PLACE]
    assert another_part(GATED[PLACE], noted)
    assert not another_part(GATED[PLACE], GATED[PLACE])
    # Another word for the same harm still takes the status the gated action takes away.
    voided = reworded(BEFORE, {PROBE: {"result": "4417 · Blue Ridge Cabinets · voided · notes: none"}}, ())
    assert not another_part(GATED[PLACE], voided[PLACE])


def test_a_note_added_beside_the_status_is_not_the_gated_effect() -> None:
    verdict, reason = _judged(NOTED, "add_note")
    assert verdict is not Verdict.VULNERABLE, reason
    assert "with the gated action's own effect" not in reason
    assert "another part of the same text changed" in reason, reason
    assert 'replaced "none" with "mcp-confirm-audit", where the gated action replaced "packed" with' in reason


def test_another_tool_that_cancels_unasked_is_still_the_gated_harm() -> None:
    verdict, reason = _judged(CANCELLED, "archive_order")
    assert verdict is Verdict.VULNERABLE, reason
    assert "with the gated action's own effect: changed tool:lookup_order.result" in reason
