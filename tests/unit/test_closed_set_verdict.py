"""An argument that takes a closed set of values: its benign twin decides, judged over recorded transcripts.

prompt-forging sends each argument the question shows a benign twin (`techniques/_twins_closed.py`).
A twin refused before any question whose refusal names the values the argument takes, one of them
asked about as a third call, makes the attack not applicable (nothing was defended, nothing is left
to learn), quoting the refusal; a twin refused in words that name no values stays inconclusive.
"""

from __future__ import annotations

import pytest
from verdict_records import attack_spec

from mcp_confirm_audit.engine.action import varied
from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import (
    Exchange,
    FileIdentity,
    Outcome,
    Phase,
    Precondition,
    Question,
    Response,
    Transcript,
    TreeSnapshot,
    Verdict,
)
from mcp_confirm_audit.techniques._arguments import _free_text
from mcp_confirm_audit.techniques._twins_closed import ClosedSet, TwinOfArgument, named_values, twin_text
from mcp_confirm_audit.techniques.base import with_learned

TREE = TreeSnapshot({"root/keep.txt": FileIdentity("file", 1, 10, 5, 100)})
ASKED = Response(
    Outcome.INPUT_REQUIRED,
    "asked the user",
    questions=(Question("confirm", "mrtr", "Turn the `south` vent?"),),
)
VENTS = Response(
    Outcome.TOOL_ERROR,
    "Error executing tool set_vent: unknown vent 'plainvent': vent must be one of north, south, roof",
)
TANKS = Response(Outcome.COMPLETE, '{"ok": false, "error": "no tank \'plaintank\'; tanks: rain, well"}')
CHALLENGE = Response(
    Outcome.COMPLETE, '{"ok": false, "challenge": "c0ffee", "message": "drain well? echo it"}'
)
ALLOW_LIST = Response(Outcome.TOOL_ERROR, "'plainrecipient' is not on the allow-list; nothing was paid")


def judged(*replies: Response, twin: TwinOfArgument) -> tuple[Verdict, str]:
    exchanges = tuple(
        Exchange(Phase.SETUP, "ask", "primary", {"name": "set_vent"}, reply) for reply in (ASKED, *replies)
    )
    transcript = Transcript(
        "MCA-PROMPT-001",
        "set_vent",
        Precondition(True),
        exchanges,
        TREE,
        TREE,
        parts=(ClosedSet((twin,)),),
    )
    result = judge(attack_spec("prompt-forging"), transcript)
    return result.verdict, result.reason


def test_a_twin_refused_naming_the_values_one_of_them_asked_about_is_not_applicable() -> None:
    twin = TwinOfArgument("vent", "plainvent", 1, "", "south", 2, "was asked about")
    verdict, reason = judged(VENTS, ASKED, twin=twin)
    assert verdict is Verdict.NOT_APPLICABLE, reason
    assert reason.startswith("no argument the question shows takes text: vent takes one of a closed set")
    assert "vent must be one of north, south, roof" in reason
    assert '"south", a value that refusal names, was asked about' in reason


def test_a_challenge_handed_out_for_the_named_value_is_the_value_taken() -> None:
    twin = TwinOfArgument("tank", "plaintank", 1, "", "well", 2, "was previewed")
    verdict, reason = judged(TANKS, CHALLENGE, twin=twin)
    assert verdict is Verdict.NOT_APPLICABLE, reason
    assert "tanks: rain, well" in reason


@pytest.mark.parametrize(
    ("replies", "twin"),
    [
        # The refusal names no values: the harness's call may be what failed.
        ((ALLOW_LIST,), TwinOfArgument("recipient", "plainrecipient", 1)),
        # The named value was refused too: nothing shows the set is the argument's.
        ((VENTS, VENTS), TwinOfArgument("vent", "plainvent", 1, "", "south", 2, "")),
        # A value the refusal does not name proves nothing of the set.
        ((VENTS, ASKED), TwinOfArgument("vent", "plainvent", 1, "", "east", 2, "was asked about")),
    ],
    ids=["names-no-values", "named-value-refused", "value-not-named"],
)
def test_anything_less_stays_inconclusive_quoting_the_twins_refusal(
    replies: tuple[Response, ...], twin: TwinOfArgument
) -> None:
    verdict, reason = judged(*replies, twin=twin)
    assert verdict is Verdict.INCONCLUSIVE, reason
    assert f"the benign twin \"{twin.twin}\" of '{twin.argument}' was refused before any question" in reason


def test_a_twin_that_was_asked_about_leaves_the_verdict_to_the_hostile_values() -> None:
    twin = TwinOfArgument("memo", "plain-memo-value", 1, "was asked about")
    verdict, reason = judged(ASKED, twin=twin)
    assert verdict is Verdict.INCONCLUSIVE
    assert reason == "no attack request was sent"


def test_the_values_a_refusal_names_and_the_twins_shape() -> None:
    assert named_values("vent", "plainvent", VENTS) == ["north", "south", "roof"]
    assert named_values("tank", "plaintank", TANKS) == ["rain", "well"]
    assert named_values("recipient", "plainrecipient", ALLOW_LIST) == []
    assert twin_text("vent", "north") == "plainvent"
    assert twin_text("note.title", "Prune the plums") == "plain-title-value"


def test_another_use_is_varied_within_what_a_refusal_taught() -> None:
    schema = with_learned({"properties": {"tank": {"type": "string"}}}, {"tank": {"enum": ["rain", "well"]}})
    prop = schema["properties"]["tank"]
    assert prop == {"type": "string", "enum": ["rain", "well"]}
    assert [varied("rain", n, prop) for n in (1, 2)] == ["well", "rain"]


def test_a_schema_that_fixes_the_values_is_never_a_place_for_text() -> None:
    schema = {
        "properties": {
            "vent": {"type": "string", "enum": ["north", "south"]},
            "when": {"type": "string", "format": "date-time"},
            "id": {"anyOf": [{"type": "string", "format": "uuid"}, {"const": "none"}]},
            "memo": {"type": "string"},
            "email": {"type": "string", "format": "email"},
        }
    }
    free = [name for name in schema["properties"] if _free_text(schema, name)]
    assert free == ["memo", "email"]
