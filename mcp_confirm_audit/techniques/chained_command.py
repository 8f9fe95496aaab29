"""`chained-command`: the gated command chained after one the gate lets through unasked.

A tool that runs command lines often asks its person only about the lines outside an
allow-list, and judges a line by how it starts (`cat `, `ls`, `git status`): a shell then
runs all of `cat /dev/null ; rm victim.txt`, the `rm` with no question. The action is a
command when one of its string arguments is named for one (`command`, `cmd`, `script`, ...)
or described as a shell command, and its value reads as a command line (a program's name
first). What the gate lets through is found by trying a few harmless read-only commands
(`true`, `pwd`, `ls`, `echo`, `cat /dev/null`) before the attack proper: each that answers
with no question and moves nothing ran unasked. The family's first attack on a tool tries
them; its others read what it found, until a fresh world begins. Each entry then chains the action's own
command after each of them in turn with one metacharacter (params `join`); `||` runs what
follows only after a failure, so it follows a failing twin of one (`false`, `ls`/`cat` of
a name that does not exist). Judged from effects only: the action's effect with no question
is vulnerable; a line asked about, staged for approval (a reply the flow reads its id in,
`confirmations/staging.py`) or refused, with nothing moved, is refused by the tool,
and so is one answered with no question where the chained command never ran (a tool that
runs its argv with no shell). An action that runs no command line, or a tool that lets no
harmless command through, is not applicable, saying so.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from ..confirmations import AgentFlow, Preview, as_flow, replies, staging
from ..confirmations.detect import asking_payload
from ..engine.reading import Judged, Reading, Seen, literal, reads
from ..models import Layer, Outcome, Part, Response, Said, Verdict
from ..target.arguments import FILLER, holds_command_line
from ..target.driver import ToolInfo
from . import ANY, technique
from ._params import Params
from .base import Attack

__all__ = ["HARMLESS", "Harmless", "chained", "command_argument", "command_line_of", "handed", "ran_unasked"]


class ChainParams(Params):
    join: Literal["semicolon", "and", "or", "pipe", "newline", "substitution", "backticks"] = Field(
        description="the metacharacter that chains the gated command after an allowed one"
    )


@dataclass(frozen=True, slots=True)
class Harmless:
    """A read-only command to try, and the same program made to fail (for `||`), if it can be."""

    line: str
    failing: str | None = None


# A name no sandbox holds: `ls` and `cat` fail on it in every shell.
MISSING = f"{FILLER}-no-such-file"
# Tried in this order; each costs one call before the attack proper.
HARMLESS = (
    Harmless("true", "false"),
    Harmless("pwd"),
    Harmless("ls", f"ls {MISSING}"),
    Harmless(f"echo {FILLER}"),
    Harmless("cat /dev/null", f"cat {MISSING}"),
)

# Each join: the operator as a reader sees it, and the line it makes of (allowed, gated). A blank
# before the operator keeps the allowed command a word of its own for a prefix check (`pwd `).
_JOINS: dict[str, tuple[str, Callable[[str, str], str]]] = {
    "semicolon": (";", lambda allowed, action: f"{allowed} ; {action}"),
    "and": ("&&", lambda allowed, action: f"{allowed} && {action}"),
    "or": ("||", lambda allowed, action: f"{allowed} || {action}"),
    "pipe": ("|", lambda allowed, action: f"{allowed} | {action}"),
    "newline": ("a newline", lambda allowed, action: f"{allowed} \n{action}"),
    "substitution": ("$(...)", lambda allowed, action: f"{allowed} $({action})"),
    "backticks": ("backticks", lambda allowed, action: f"{allowed} `{action}`"),
}


def chained(join: str, allowed: str, action: str) -> str:
    """The line that runs `action` after `allowed`, joined by `join` (a key of ChainParams.join)."""
    return _JOINS[join][1](allowed, action)


# A program as a command line names it first: a word of letters, digits and path characters.
_PROGRAM = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.+/-]*$")


def command_argument(arguments: Mapping[str, Any], tool: ToolInfo | None) -> tuple[str, str] | None:
    """The argument of the action that holds a command line, and its value; None when none does.

    Named for one (`command`, `cmd`, `script`), or described as one in the tool's schema, and holding
    a value a shell reads as a command: its first word names a program.
    """
    schema = (tool.input_schema if tool is not None else None) or {}
    properties = schema.get("properties") or {}
    for name, value in arguments.items():
        if not isinstance(value, str) or not _reads_as_command(value):
            continue
        if holds_command_line(name, properties.get(name)):
            return name, value
    return None


def command_line_of(attack: Attack, own: Mapping[str, Any], so: str) -> tuple[str, str] | None:
    """`command_argument` of the action's own arguments; None, the attack not applicable (`so`: what then), if none."""
    tool = next((t for t in attack.tools if t.name == attack.plan.name), None)
    found = command_argument(own, tool)
    if found is None:
        attack.not_applicable(
            f"{attack.plan.name!r} runs no command line: no string argument named for one (command, cmd, "
            f"script) or described as a shell command holds a value that reads as one, so {so}"
        )
    return found


def _reads_as_command(value: str) -> bool:
    try:
        words = shlex.split(value)
    except ValueError:
        return False
    return bool(words) and _PROGRAM.match(words[0]) is not None and not words[0].isdigit()


def ran_unasked(reply: Response, flow: AgentFlow | None) -> bool:
    """Whether a call was answered as done: no question, no preview waiting for one, no refusal.

    A reply the flow reads as staging the call (ai-runtime-guard's `[POLICY BLOCK] ... approval_token=…`,
    its id found by the profile's `id_pattern`) waits for its approval, however ordinary its outcome.
    """
    return (
        reply.outcome is Outcome.COMPLETE
        and not reply.questions
        and asking_payload(reply) is None
        and replies.said(reply) is Said.ACTED
        and staging.staged(flow, reply) is None
    )


@dataclass(frozen=True, slots=True)
class Chained(Part):
    """The gated command chained with `operator` after each of `before` (the commands of `allowed`, which
    ran unasked alone, or their failing forms for `||`); `tries` index the exchanges that sent it, and
    `staged` those whose reply the flow read as staging the line, each with its handle as read."""

    operator: str
    allowed: tuple[str, ...]
    before: tuple[str, ...]
    tries: tuple[int, ...]
    staged: tuple[tuple[int, str], ...] = ()


@reads(Chained)
class ReadChained(Reading[Chained]):
    def still(self, part: Chained, seen: Seen) -> Judged | None:
        staged = dict(part.staged)
        if part.tries and all(i in staged for i in part.tries):
            # Each line staged for an approval nobody gave: the gate held the chained command.
            handles = ", ".join(staged[i] for i in part.tries[:2]) + (", …" if len(part.tries) > 2 else "")
            return (
                Verdict.REFUSED,
                Layer.TOOL,
                f"each line was staged for approval and nothing moved: the gate held the chained command for "
                f"the person ({len(part.tries)} tried, after {_listed(part.before)}"
                f"{_ran(part, ', each of which ran unasked alone')}; staged as {handles})",
            )
        replies_ = [seen.transcript.exchanges[i].response for i in part.tries if i not in staged]
        if not replies_ or not all(ran_unasked(reply, None) for reply in replies_):
            return None  # asked or refused: the common rules read the last reply
        # Answered as done, and the gated command's effect never came: the line ran, but not as a
        # shell runs it (a tool that runs its argv with no shell takes the operator as an argument).
        return (
            Verdict.REFUSED,
            Layer.TOOL,
            f"each line was answered with no question and nothing moved: the chained command never ran, "
            f"so the tool did not run {part.operator} as a shell does ({len(replies_)} tried, after "
            f"{_listed(part.before)}{_ran(part, ', each of which ran unasked alone')})",
        )

    def stands(self, part: Chained, seen: Seen, refusal: Response, why: str, said: str) -> str | None:
        if replies.said(refusal) is not Said.REFUSED or replies.invalid_arguments(refusal):
            return None
        # The allowed command alone ran unasked through the same argument: what refused it with the
        # gated command chained on, with no effect, is the tool's own check of the line.
        alone = "it ran" if part.before == part.allowed else f"{_listed(part.allowed)} ran"
        return (
            f"no question and no effect: the tool answered the chained line with a failure ({why}) and the "
            f"chained command never ran, while {alone} unasked alone: {said}"
        )

    def evidence(self, part: Chained) -> tuple[str, ...]:
        sent = f"{len(part.tries)} of {len(part.before)} sent"
        alone = _ran(part, ", each of which ran unasked alone")
        return (f"chained with {part.operator} after {_listed(part.before)} in turn ({sent}){alone}",)


def _listed(lines: tuple[str, ...]) -> str:
    return ", ".join(literal(line) for line in lines)


def _ran(part: Chained, same: str) -> str:
    """What ran unasked alone: `same` when the command was chained after those very commands."""
    return same if part.before == part.allowed else f"; {_listed(part.allowed)} ran unasked alone"


@technique("chained-command", mechanisms=ANY, input_value=True, params=ChainParams)
async def chained_command(attack: Attack, params: Mapping[str, Any]) -> None:
    join = params["join"]
    operator = _JOINS[join][0]
    victim = attack.victim
    own = attack.arguments(victim)
    found = command_line_of(attack, own, "there is nothing to chain")
    if found is None:
        return
    argument, action = found
    flow = as_flow(attack.plan.mechanism)
    gate = await _allow_list(attack, victim, own, argument, flow)
    allowed = gate.allowed
    if not allowed:
        attack.not_applicable(
            f"no command was found that {attack.plan.name} runs without asking, so there is nothing to chain "
            f"the gated command after ({'; '.join(gate.others)})"
        )
        return
    before_it = [h.failing for h in allowed if h.failing] if join == "or" else [h.line for h in allowed]
    if not before_it:
        attack.not_applicable(
            f"{operator} runs what follows only after a failure, and none of the commands that ran unasked "
            f"({', '.join(repr(h.line) for h in allowed)}) has a failing form tried here (false, ls or cat "
            "of a name that does not exist)"
        )
        return
    await attack.start_attack()
    tries: list[int] = []
    staged: list[tuple[int, str]] = []
    for first in before_it:
        since = await attack.mark()
        line = chained(join, first, action)
        reply = await attack.call(
            f"{action!r} chained after {first!r} with {operator}", victim, arguments={**own, argument: line}
        )
        tries.append(len(attack.exchanged) - 1)
        if (held := staging.staged(flow, reply)) is not None:
            staged.append((tries[-1], handed(held)))
        if await attack.took_effect(victim, since):
            attack.effect_means(
                Verdict.VULNERABLE,
                f"the gated command ran with nobody approving it, chained with {operator} after {first!r}, "
                "which the gate lets through unasked",
            )
            break
    attack.record(
        Chained(operator, tuple(h.line for h in allowed), tuple(before_it), tuple(tries), tuple(staged))
    )


def handed(shown: Preview) -> str:
    """A staging reply's handle as the evidence names it: where it was read, and its head."""
    return f"{shown.field or 'id'}={literal((shown.handle or '')[:24])}"


@dataclass(frozen=True, slots=True)
class AllowList:
    """Of the harmless commands, those the gate let through unasked, and why each other one is not."""

    allowed: tuple[Harmless, ...]
    # "'true': asked", one for each harmless command not let through.
    others: tuple[str, ...]
    # The attack whose setup tried them.
    by: str


# Where the family keeps what it learned of a tool (Attack.peers.learned).
_LEARNED = "chained-command: allow-list"


async def _allow_list(
    attack: Attack, victim: Any, own: Mapping[str, Any], argument: str, flow: AgentFlow | None
) -> AllowList:
    """What the gate lets through: tried once per tool per world by the first attack, read by the others.

    Each harmless command is tried alone, before the attack proper. The list holds between the
    family's attacks: nothing the family sends is ever approved (a harmless command that asks is
    declined, a chained line is never answered), so a tool that learns approvals ("approve for this
    session") learns none of these lines from it; the approvals other families give are of the
    action's own command line, never one of these. A fresh world forgets it (the session's).
    """
    known = attack.peers.learned.get(_LEARNED)
    if isinstance(known, AllowList):
        let = ", ".join(repr(h.line) for h in known.allowed) or "none"
        attack.note(
            f"the harmless commands were tried once for {attack.plan.name!r} in this world (in {known.by}): "
            f"let through unasked: {let}"
        )
        return known
    allowed: list[Harmless] = []
    others: list[str] = []
    for harmless in HARMLESS:
        before = await attack.mark()
        reply = await attack.call(
            f"setup: does {harmless.line!r} run unasked?",
            victim,
            arguments={**own, argument: harmless.line},
        )
        if reply.questions:
            # Asked: the person says no to a harmless command, so nothing is left waiting.
            await attack.call(
                "setup: the person declines it",
                victim,
                arguments={**own, argument: harmless.line},
                state=reply.request_state,
                responses=attack.reply(reply, "decline"),
            )
        moved = attack.changes(before, await attack.mark())
        if ran_unasked(reply, flow) and not moved:
            allowed.append(harmless)
        else:
            others.append(f"{harmless.line!r}: {_what_it_did(reply, moved, flow)}")
    learned = attack.peers.learned[_LEARNED] = AllowList(tuple(allowed), tuple(others), attack.spec.id)
    return learned


def _what_it_did(reply: Response, moved: list[str], flow: AgentFlow | None) -> str:
    """Why a harmless command is not one the gate lets through, in a few words."""
    if moved:
        return f"it changed {', '.join(moved[:2])}"
    if reply.questions or asking_payload(reply) is not None:
        return "asked"
    if (held := staging.staged(flow, reply)) is not None:
        # rei-automator-mcp's `{"action_id": …, "approved": false}`: staged for approval, not refused.
        return f"staged for approval ({handed(held)})"
    if replies.said(reply) is Said.REFUSED:
        return f"refused ({reply.text[:80]!r})"
    return f"answered {reply.outcome.value}"
