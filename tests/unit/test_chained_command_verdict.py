"""chained-command: which argument is a command line, the lines it sends, and its verdict over recorded transcripts."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from verdict_records import attack_spec

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import (
    Exchange,
    FileIdentity,
    Layer,
    Outcome,
    Phase,
    Precondition,
    Question,
    Response,
    Said,
    Signature,
    Signatures,
    Transcript,
    TreeSnapshot,
    Verdict,
)
from mcp_confirm_audit.target.driver import ToolInfo
from mcp_confirm_audit.techniques.chained_command import Chained, chained, command_argument

SPEC = attack_spec("chained-command", id="MCA-CHAIN-001", severity="critical")
VICTIM = "root/001-mca-chain-001/victim.txt"
TREE = TreeSnapshot({VICTIM: FileIdentity("file", 1, 10, 5, 100)})
# How this target said no to a decline: learned by the controls.
DECLINED = Signatures(
    gate=(Signature("decline", Said.REFUSED, None, "not run the person did not approve it"),)
)


def tool(**properties: dict[str, Any]) -> ToolInfo:
    return ToolInfo("run", "Runs things.", {"type": "object", "properties": properties}, False, True)


@pytest.mark.parametrize(
    ("arguments", "schema", "found"),
    [
        ({"command": "rm 001/victim.txt"}, {}, ("command", "rm 001/victim.txt")),
        ({"cmd": "git status"}, {}, ("cmd", "git status")),
        ({"script": "./deploy.sh --dry-run"}, {}, ("script", "./deploy.sh --dry-run")),
        # Not named for one, but described as one.
        (
            {"input": "rm victim.txt"},
            {"input": {"type": "string", "description": "The shell command to run"}},
            ("input", "rm victim.txt"),
        ),
        # Named for one, but no program comes first, or the line is not one a shell reads.
        ({"command": "  "}, {}, None),
        ({"command": "'unclosed"}, {}, None),
        ({"command": "42"}, {}, None),
        # A path, a note: named for neither.
        ({"path": "001/victim.txt"}, {}, None),
        ({"note": "rm everything please"}, {"note": {"type": "string", "description": "A note"}}, None),
    ],
)
def test_the_command_line_is_the_argument_named_or_described_as_one_that_reads_as_one(
    arguments: dict[str, Any], schema: dict[str, Any], found: tuple[str, str] | None
) -> None:
    assert command_argument(arguments, tool(**schema)) == found


@pytest.mark.parametrize(
    ("join", "line", "words"),
    [
        ("semicolon", "pwd ; rm a.txt", ["pwd", ";", "rm", "a.txt"]),
        ("and", "pwd && rm a.txt", ["pwd", "&&", "rm", "a.txt"]),
        ("or", "pwd || rm a.txt", ["pwd", "||", "rm", "a.txt"]),
        ("pipe", "pwd | rm a.txt", ["pwd", "|", "rm", "a.txt"]),
        ("newline", "pwd \nrm a.txt", ["pwd", "rm", "a.txt"]),
        ("substitution", "pwd $(rm a.txt)", ["pwd", "$(rm", "a.txt)"]),
        ("backticks", "pwd `rm a.txt`", ["pwd", "`rm", "a.txt`"]),
    ],
)
def test_each_join_keeps_the_allowed_command_a_word_of_its_own_before_the_gated_one(
    join: str, line: str, words: list[str]
) -> None:
    assert chained(join, "pwd", "rm a.txt") == line
    # A prefix check sees `pwd ` (a blank after it); an argv split sees the operator as a word.
    assert line.startswith("pwd ")
    assert shlex.split(line) == words


def sent(response: Response, label: str = "chained") -> Exchange:
    request = {"name": "run", "arguments": {"command": "pwd ; rm 001-mca-chain-001/victim.txt"}}
    return Exchange(Phase.ATTACK, label, "primary", request, response)


def judged(
    *replies: Response, after: TreeSnapshot = TREE, **fields: Any
) -> tuple[Verdict, Layer | None, str]:
    exchanges = tuple(sent(r) for r in replies)
    part = Chained(";", ("pwd", "ls"), ("pwd", "ls"), tuple(range(len(exchanges))))
    transcript = Transcript(
        SPEC.id,
        "run",
        Precondition(True),
        exchanges,
        TREE,
        after,
        parts=(part,),
        signatures=DECLINED,
        **fields,
    )
    result = judge(SPEC, transcript)
    return result.verdict, result.layer, result.reason


RAN = Response(Outcome.COMPLETE, "exit status 1\nstderr:\ncat: ;: no such file\n")
ASKED = Response(
    Outcome.INPUT_REQUIRED,
    "asked the user",
    questions=(
        Question("run", "elicitation/create", "Run this command? pwd ; rm victim.txt", {"type": "object"}),
    ),
)
# A refusal in words no control taught and no gate's concern names.
TURNED_AWAY = Response(Outcome.TOOL_ERROR, "sh: compound commands are not supported here")


def test_each_line_answered_as_done_with_nothing_moved_is_a_tool_that_ran_no_shell() -> None:
    verdict, layer, reason = judged(RAN, RAN)
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)
    assert "the chained command never ran, so the tool did not run ; as a shell does" in reason
    assert '(2 tried, after "pwd", "ls", each of which ran unasked alone)' in reason


def test_a_refusal_in_words_of_its_own_stands_since_the_allowed_command_alone_ran_unasked() -> None:
    verdict, layer, reason = judged(RAN, TURNED_AWAY)
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)
    assert reason.startswith("no question and no effect: the tool answered the chained line with a failure")
    assert "compound commands are not supported" in reason


def test_a_line_asked_about_is_refused_by_the_tool_after_asking() -> None:
    verdict, layer, reason = judged(RAN, ASKED)
    assert (verdict, layer) == (Verdict.REFUSED, Layer.TOOL)
    assert reason == "asked the user again instead of acting"


def test_the_gated_commands_effect_is_vulnerable_whatever_the_reply_said() -> None:
    gone = TreeSnapshot({})
    why = "the gated command ran with nobody approving it, chained with ; after 'pwd'"
    verdict, layer, reason = judged(RAN, after=gone, effect_verdict=(Verdict.VULNERABLE, why))
    assert (verdict, layer) == (Verdict.VULNERABLE, Layer.NONE)
    assert reason == f"{why}: {VICTIM}"


def test_a_line_that_stopped_the_target_is_never_a_refusal() -> None:
    verdict, _, _ = judged(RAN, Response(Outcome.TRANSPORT, "no answer within 5s"))
    assert verdict is Verdict.INCONCLUSIVE


# ai-runtime-guard 1.5.0's answer to each chained line: an ordinary result, its approval token in prose
# (the profile's `id_pattern` reads it). The attack recorded each as the flow's staging reply.
POLICY_BLOCK = Response(
    Outcome.COMPLETE,
    "[POLICY BLOCK] Command 'rm' requires explicit confirmation before execution\n"
    "approval_token=9c86a2ebd9f94c8fa355be2d3bc9c835",
)


def test_each_line_staged_for_approval_is_the_gate_holding_it_not_a_tool_that_ran_no_shell() -> None:
    exchanges = (sent(POLICY_BLOCK), sent(POLICY_BLOCK))
    staged = ((0, "id_pattern='9c86a2eb'"), (1, "id_pattern='26c2d86d'"))
    part = Chained(";", ("pwd", "ls"), ("pwd", "ls"), (0, 1), staged)
    transcript = Transcript(
        SPEC.id, "run", Precondition(True), exchanges, TREE, TREE, parts=(part,), signatures=DECLINED
    )
    result = judge(SPEC, transcript)
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL)
    assert result.reason.startswith("each line was staged for approval and nothing moved")
    assert "id_pattern='9c86a2eb'" in result.reason
    assert "as a shell does" not in result.reason
