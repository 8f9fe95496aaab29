"""Several redemptions of one approval: at most one may act, counted from effects, judged from the record alone."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from verdict_records import HUNG, SDK_BOUNDARY_REFUSAL, attack_spec

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import (
    FAIL_CLOSED,
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
from mcp_confirm_audit.techniques._single_use import SingleUse

SPEC = attack_spec("double-spend", id="MCA-DSPEND-001", severity="critical")
TREE = TreeSnapshot({"root/victim.txt": FileIdentity("file", 1, 10, 5, 100)})

DELETED = Response(Outcome.COMPLETE, 'Deleted "victim.txt" (41 bytes).')
KEPT = Response(Outcome.COMPLETE, "Nothing was deleted: the user chose decline.")
SPENT = Response(Outcome.TOOL_ERROR, "confirmation already used or unknown")
GONE = Response(Outcome.TOOL_ERROR, "'victim.txt' does not exist")
SEALED_ELSEWHERE = SDK_BOUNDARY_REFUSAL


def sent(action: str) -> dict[str, Any]:
    """A redemption's request as the driver records it: the approval's state and one answer."""
    answer = {"action": action, **({"content": {"confirm": True}} if action == "accept" else {})}
    return {"name": "delete_file", "requestState": "v1.state", "inputResponses": {"confirm": answer}}


def record(
    racing: list[tuple[Response, str]],
    replays: dict[str, Response],
    taken_racing: int,
    taken: int | None = None,
    if_none_taken: str = "inconclusive",
    declined: int | None = None,
) -> Transcript:
    """Racing redemptions (answer, connection), then one sequential replay per connection.

    Every redemption sends an accept, but the one at index `declined`, which sends a decline.
    """
    exchanges = [Exchange(Phase.SETUP, "ask", "primary", {}, Response(Outcome.INPUT_REQUIRED))]
    exchanges += [
        Exchange(Phase.ATTACK, f"redemption {i}", conn, sent("decline" if i == declined else "accept"), r)
        for i, (r, conn) in enumerate(racing)
    ]
    replay_at = {}
    for conn, response in replays.items():
        replay_at[conn] = len(exchanges)
        exchanges.append(Exchange(Phase.ATTACK, f"replay on {conn}", conn, sent("accept"), response))
    single = SingleUse(
        racing=tuple(range(1, len(racing) + 1)),
        replays=tuple(replay_at[conn] for _, conn in racing),
        taken_racing=taken_racing,
        taken=taken_racing if taken is None else taken,
        if_none_taken=if_none_taken,
    )
    return Transcript(
        SPEC.id, "delete_file", Precondition(True), tuple(exchanges), TREE, TREE, parts=(single,)
    )


def test_one_winner_and_losers_refused_like_a_sequential_replay_is_refused() -> None:
    result = judge(SPEC, record([(DELETED, "a"), (SPENT, "a"), (SPENT, "a")], {"a": SPENT}, taken_racing=1))
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)
    assert "took effect once" in result.reason


def test_a_second_effect_is_vulnerable_whatever_the_answers_said() -> None:
    result = judge(SPEC, record([(DELETED, "a"), (GONE, "a")], {"a": SPENT}, taken_racing=2))
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert "took effect 2 times" in result.reason


def test_an_effect_of_the_sequential_replay_counts_too() -> None:
    result = judge(SPEC, record([(DELETED, "a"), (SPENT, "a")], {"a": DELETED}, taken_racing=1, taken=2))
    assert result.verdict is Verdict.VULNERABLE


def test_two_redemptions_that_say_they_acted_are_not_two_effects() -> None:
    # Replies say who refused, never whether something happened: one effect is one action.
    result = judge(SPEC, record([(KEPT, "a"), (DELETED, "a"), (SPENT, "a")], {"a": SPENT}, taken_racing=1))
    assert result.verdict is Verdict.REFUSED
    assert "took effect once" in result.reason


def test_losers_worded_unlike_the_replay_are_not_weak_when_the_effect_shows_one_action() -> None:
    # An atomic execution slot and an optimistic version check word their refusals apart;
    # the effect, exactly one, is what says the approval was single-use.
    result = judge(SPEC, record([(DELETED, "a"), (GONE, "a"), (SPENT, "a")], {"a": SPENT}, taken_racing=1))
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)


def test_eight_replies_saying_refused_in_an_ordinary_result_and_no_effect_are_never_successes() -> None:
    refused = Response(Outcome.COMPLETE, '{"status": "refused", "reason": "token already used"}')
    t = record([(refused, "a")] * 8, {"a": refused}, taken_racing=0)
    result = judge(SPEC, t)
    assert result.verdict is Verdict.INCONCLUSIVE
    assert "reported success" not in result.reason


def test_a_decline_that_wins_the_race_honestly_is_refused_when_the_attack_allows_it() -> None:
    t = record([(KEPT, "a"), (SPENT, "a")], {"a": SPENT}, 0, if_none_taken="refused", declined=0)
    assert judge(SPEC, t).verdict is Verdict.REFUSED


# A server with single-use state of its own, whose decline is an error in words of
# its own: the decline's reply is not a losing accept, whatever it says.
OPERATOR_DECLINED = Response(Outcome.TOOL_ERROR, "Request declined by operator.")
CONSUMED = Response(Outcome.TOOL_ERROR, "That confirmation has been consumed.")


def test_a_decline_worded_unlike_the_replay_refusal_is_not_a_loser_stopped_by_another_guard() -> None:
    # Recorded from MCA-DSPEND-002 on such a server: the decline won, all seven accepts
    # got the replay's own refusal. It was reported weak, twice out of twice.
    racing = [(OPERATOR_DECLINED, "a"), *[(CONSUMED, "a")] * 7]
    t = record(racing, {"a": CONSUMED}, taken_racing=0, if_none_taken="refused", declined=0)
    result = judge(SPEC, t)
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.reason


def test_a_second_effect_after_a_decline_won_is_vulnerable() -> None:
    racing = [(KEPT, "a"), (DELETED, "a"), (DELETED, "a")]
    t = record(racing, {"a": SPENT}, taken_racing=2, if_none_taken="refused", declined=0)
    assert judge(SPEC, t).verdict is Verdict.VULNERABLE


def test_no_effect_at_all_where_one_was_due_is_inconclusive_never_refused() -> None:
    t = record([(SPENT, "a"), (SPENT, "a")], {"a": SPENT}, taken_racing=0)
    assert judge(SPEC, t).verdict is Verdict.INCONCLUSIVE


def test_an_honest_redemption_refused_by_another_replica_is_fail_closed_and_says_what_users_see() -> None:
    t = record([(SEALED_ELSEWHERE, "b")], {"a": SPENT, "b": SEALED_ELSEWHERE}, 0, if_none_taken="fail-closed")
    result = judge(SPEC, t)
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.SDK_BOUNDARY)
    assert result.reason.startswith("fail-closed")
    assert FAIL_CLOSED in result.reason


def test_each_loser_is_compared_with_the_replay_on_its_own_process() -> None:
    # Replica b refuses everything from a at the boundary (its own keys): that is
    # its sequential answer too, so no other guard was involved.
    racing = [(DELETED, "a"), (SEALED_ELSEWHERE, "b"), (SPENT, "a"), (SEALED_ELSEWHERE, "b")]
    result = judge(SPEC, record(racing, {"a": SPENT, "b": SEALED_ELSEWHERE}, taken_racing=1))
    assert result.verdict is Verdict.REFUSED
    assert "sdk-boundary on b" in result.reason


def test_a_target_that_stops_answering_mid_race_is_inconclusive() -> None:
    result = judge(SPEC, record([(DELETED, "a"), (HUNG, "a")], {"a": SPENT}, taken_racing=1))
    assert (result.verdict, result.layer) == (Verdict.INCONCLUSIVE, Layer.TRANSPORT)


def test_the_evidence_counts_the_effects() -> None:
    result = judge(SPEC, record([(DELETED, "a"), (SPENT, "a")], {"a": SPENT}, taken_racing=1))
    assert any(line.startswith("effects: 1 during the race, 1 in all") for line in result.evidence)


# Recorded from MCA-TOKREUSE-003 on a shell whose approval lasts its session (host-terminal-mcp, trial
# 14): `touch` of the file the honest redemption made, nine times, each answered as the first was.
TOUCHED = Response(Outcome.COMPLETE, "Exit code: 0\nWorking directory: {sandbox}/root")
# The same server's single-use check, had it one, in an ordinary result worded as nothing like success.
ASKS_AGAIN = Response(
    Outcome.COMPLETE, '{"status": "needs_approval", "message": "touch made.txt is not in the allow list"}'
)
ONE_NEW_ROW = ("added tool:list_payments.payments[*]",)
A_VALUE_SET = ("changed tool:greenhouse.vents.north",)


def redeemed(
    racing: list[Response], replay: Response, counted_by: str, places: tuple[str, ...], taken_racing: int = 1
) -> Transcript:
    """One process's race (its redemptions, then its sequential replay), one effect counted."""
    t = record([(r, "a") for r in racing], {"a": replay}, taken_racing=taken_racing, taken=1)
    single = t.parts[0]
    assert isinstance(single, SingleUse)
    return replace(t, parts=(replace(single, counted_by=counted_by),), effect_places=places)


# (the race, where a repeat would show) -> the verdict, and the layer when refused
ANSWERED_AS_DONE = {
    # A touch again, a value set again: a repeat leaves nothing new to count, and nothing refused it.
    "every redemption answered as the first, a repeat unseen": (
        redeemed([TOUCHED] * 8, TOUCHED, "probes", ()),
        (Verdict.INCONCLUSIVE, None),
    ),
    "a value set again, answered as the first": (
        redeemed([TOUCHED] * 3, TOUCHED, "probes", A_VALUE_SET),
        (Verdict.INCONCLUSIVE, None),
    ),
    # Refused by the losers, but the replay after the race was answered as the winner: it may have acted.
    "the replay answered as the winner, a repeat unseen": (
        redeemed([TOUCHED, ASKS_AGAIN, ASKS_AGAIN], TOUCHED, "probes", ()),
        (Verdict.INCONCLUSIVE, None),
    ),
    # Each effect adds a row, or the victim is put back after each: a repeat would have been counted.
    "answered alike, each effect a new row": (
        redeemed([TOUCHED] * 8, TOUCHED, "probes", ONE_NEW_ROW),
        (Verdict.REFUSED, None),
    ),
    "answered alike, the victim put back after each": (
        redeemed([DELETED] * 4, DELETED, "restorer", ()),
        (Verdict.REFUSED, None),
    ),
    # The single-use check said no, in words unlike the winner's: its layer is the tool's.
    "the losers and the replay asked again": (
        redeemed([TOUCHED, ASKS_AGAIN, ASKS_AGAIN], ASKS_AGAIN, "probes", ()),
        (Verdict.REFUSED, Layer.TOOL),
    ),
    "the losers and the replay refused with an error": (
        redeemed([TOUCHED, SPENT, SPENT], SPENT, "probes", ()),
        (Verdict.REFUSED, Layer.TOOL),
    ),
}


@pytest.mark.parametrize("case", sorted(ANSWERED_AS_DONE))
def test_a_redemption_answered_as_the_one_that_acted_is_never_a_refusal(case: str) -> None:
    transcript, expected = ANSWERED_AS_DONE[case]
    result = judge(attack_spec("token-replay", id="MCA-TOKREUSE-003"), transcript)
    assert (result.verdict, result.layer) == expected, result.reason
    if result.verdict is Verdict.INCONCLUSIVE:
        assert "answered alike, as the one that took effect was" in result.reason, result.reason
        assert "leaves nothing new" in result.reason, result.reason


def test_two_effects_answered_alike_are_the_finding_whatever_a_repeat_shows() -> None:
    t = redeemed([TOUCHED] * 8, TOUCHED, "probes", ())
    single = t.parts[0]
    assert isinstance(single, SingleUse)
    twice = replace(t, parts=(replace(single, taken_racing=2, taken=2),))
    assert judge(attack_spec("token-replay"), twice).verdict is Verdict.VULNERABLE
