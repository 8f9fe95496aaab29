"""An argument that takes a closed set of values: its benign twin decides, judged over recorded transcripts.

prompt-forging sends each argument the question shows a benign twin (`techniques/_twins_closed.py`).
A twin refused before any question whose refusal names the values the argument takes, one of them
asked about as a third call, makes the attack not applicable (nothing was defended, nothing is left
to learn), quoting the refusal. A twin refused in words that name no values gets a shape twin (the
honest value, asked about, with its last digit changed): refused too, the argument names a record that
must exist (a lookup, not applicable); asked about, the argument is open; anything less stays inconclusive.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

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
from mcp_confirm_audit.techniques._twins_closed import (
    ClosedSet,
    TwinOfArgument,
    in_sandbox,
    named_values,
    shape_twin,
    twin_text,
)
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


def judged(
    *replies: Response, twin: TwinOfArgument, sent: tuple[dict[str, str], ...] = ()
) -> tuple[Verdict, str]:
    """The verdict on ASKED then `replies`, the calls' arguments `sent` (by position) where given."""
    exchanges = tuple(
        Exchange(Phase.SETUP, "ask", "primary", {"name": "set_vent", "arguments": args}, reply)
        for reply, args in zip(
            (ASKED, *replies), (*sent, *({} for _ in range(len(replies) + 1))), strict=False
        )
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


# The job tracker: its job_id names a row that must exist ("no job 'J7' in jobs.csv").
NO_JOB = Response(
    Outcome.TOOL_ERROR, "Error executing tool set_status: no job 'PLAIN-JOBID-VALUE' in jobs.csv"
)
NO_J7 = Response(Outcome.TOOL_ERROR, "Error executing tool set_status: no job 'J7' in jobs.csv")
SENT = ({"job_id": "J1"}, {"job_id": "PLAIN-JOBID-VALUE"}, {"job_id": "J7"})


def lookup(shape: str = "J7", reached: str = "", honest: int = 0) -> TwinOfArgument:
    return TwinOfArgument(
        "job_id",
        "PLAIN-JOBID-VALUE",
        1,
        honest="J1",
        honest_exchange=honest,
        shape=shape,
        shape_exchange=2,
        shape_reached=reached,
    )


def test_a_shape_twin_refused_while_the_honest_value_was_asked_is_a_lookup_not_applicable() -> None:
    verdict, reason = judged(NO_JOB, NO_J7, twin=lookup(), sent=SENT)
    assert verdict is Verdict.NOT_APPLICABLE, reason
    assert reason.startswith(
        "no argument the question shows takes text: job_id names a record that must exist"
    )
    # The shape twin's own refusal is quoted, and the honest value that was asked is named.
    assert '"J7" ("Error executing tool set_status: no job \'J7\' in jobs.csv")' in reason
    assert 'a value of the same shape as the honest "J1", which was asked about' in reason
    assert "a record whose own text is hostile would be another attack" in reason


@pytest.mark.parametrize(
    ("replies", "twin", "sent"),
    [
        # Not a value of the honest one's shape: a format check may have refused it.
        ((NO_JOB, NO_J7), lookup(shape="J10"), (*SENT[:2], {"job_id": "J10"})),
        # The honest value's call was no question (it points at the twin's own refusal).
        ((NO_JOB, NO_J7), lookup(honest=1), SENT),
        # The call recorded as the shape twin sent another value.
        ((NO_JOB, NO_J7), lookup(), (*SENT[:2], {"job_id": "J2"})),
        # The shape twin was not refused: it stopped (a timeout says nothing of the argument).
        ((NO_JOB, Response(Outcome.TRANSPORT, "timed out")), lookup(), SENT),
    ],
    ids=["not-the-shape", "honest-not-asked", "shape-not-sent", "shape-stopped"],
)
def test_a_shape_twin_that_proves_less_stays_inconclusive(
    replies: tuple[Response, ...], twin: TwinOfArgument, sent: tuple[dict[str, str], ...]
) -> None:
    verdict, reason = judged(*replies, twin=twin, sent=sent)
    assert verdict is Verdict.INCONCLUSIVE, reason
    assert reason.startswith("no argument the question shows took a harmless value"), reason
    assert "no job 'PLAIN-JOBID-VALUE'" in reason


def test_a_shape_twin_that_was_asked_about_leaves_the_verdict_to_the_hostile_values() -> None:
    # A format check ("a job id is J and digits") that takes J7: the argument is open, nothing is concluded.
    format_only = Response(Outcome.TOOL_ERROR, "a job id is J and digits, as J1")
    verdict, reason = judged(format_only, ASKED, twin=lookup(reached="was asked about"), sent=SENT)
    assert verdict is Verdict.INCONCLUSIVE
    assert reason == "no attack request was sent"


@pytest.mark.parametrize(
    ("honest", "shape"),
    [
        ("J1", "J7"),
        ("inv-0042", "inv-0048"),
        ("J0", "J6"),
        ("J9", "J6"),
        ("alice", "alicb"),
        ("Bob", "Boe"),
        ("Sam", "Saw"),
        ("---", ""),
    ],
)
def test_the_shape_twin_keeps_the_length_and_the_kind_of_each_character(honest: str, shape: str) -> None:
    assert shape_twin(honest) == shape


def test_a_folder_in_the_sandbox_is_never_taken_for_a_lookup(tmp_path: Path) -> None:
    # A photo organiser's source folder must exist, but anybody who writes to the root, the harness
    # too, can make one whose name is hostile text: its missing twin proves nothing about the question.
    root = tmp_path / "root"
    (root / "in").mkdir(parents=True)
    attack = cast(Any, SimpleNamespace(sandbox=SimpleNamespace(root=root)))
    assert in_sandbox(attack, str(root / "in"))
    assert in_sandbox(attack, "in")
    # A job id, and a folder outside the root, are not the sandbox's entries: the rule may apply.
    assert not in_sandbox(attack, "J1")
    (tmp_path / "elsewhere").mkdir()
    assert not in_sandbox(attack, str(tmp_path / "elsewhere"))
