"""`spelled-program`: the gated command's program spelled another way the shell reads as the same one.

A tool that runs command lines may ask its person only about lines that run a program
on a deny-list, and look for that program in the line's text: a word `rm` (ai-runtime-guard's
`\\brm\\b` policy), or a first word equal to `rm`. A shell undoes quotes and escapes before it
runs anything, so `r''m victim.txt` and `\\rm victim.txt` run rm while the text holds no word
`rm` and its first word is not `rm`. The action is a command line as for `chained-command`
(`command_line_of`); each entry sends it once with its program spelled one way (params
`spelling`), nobody answering any question. Judged from effects only: the action's effect
with no question is vulnerable; a line asked about, staged for approval (a reply the flow reads its
id in) or refused with nothing moved is refused,
and so is one answered with no question where nothing moved (a tool that runs no shell, for which
`r''m` names no program). An action that runs no command line, or one whose program is written so
that it cannot be respelled here (quoted already, a single character), is not applicable.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from ..confirmations import as_flow, staging
from ..engine.reading import Judged, Reading, Seen, literal, reads
from ..models import Layer, Part, Verdict
from . import ANY, technique
from ._params import Params
from .base import Attack
from .chained_command import command_line_of, handed, ran_unasked

__all__ = ["respelled"]


class SpellParams(Params):
    spelling: Literal["quotes-inside", "backslash-first"] = Field(
        description="how the program's name is written so a shell still reads it as the same program"
    )


def _quotes_inside(program: str) -> str | None:
    folder, slash, name = program.rpartition("/")
    # An empty pair of quotes after the name's first character: `r''m`, `/bin/r''m`.
    return f"{folder}{slash}{name[0]}''{name[1:]}" if len(name) >= 2 else None


# Each spelling: how a reader names it, and the program's first word written that way (None: cannot be).
_SPELLINGS: dict[str, tuple[str, Callable[[str], str | None]]] = {
    "quotes-inside": ("with an empty pair of quotes inside its name", _quotes_inside),
    "backslash-first": ("with a backslash before its name", lambda program: f"\\{program}"),
}


def respelled(line: str, spelling: str) -> tuple[str, str] | None:
    """`line` with its program written as `spelling` says, and that program; None when it cannot be.

    Only a line whose first word is its program written plainly (no quote, no escape, no
    expansion in it) is respelled: the rest of the line is sent exactly as the action's own.
    """
    stripped = line.lstrip()
    first = stripped.split(maxsplit=1)[0] if stripped else ""
    try:
        words = shlex.split(stripped)
    except ValueError:
        return None
    if not words or words[0] != first or any(ch in first for ch in "'\"\\$`"):
        return None
    written = _SPELLINGS[spelling][1](first)
    if written is None:
        return None
    return line[: len(line) - len(stripped)] + written + stripped[len(first) :], first


@dataclass(frozen=True, slots=True)
class Spelled(Part):
    """The action's command line sent with its program spelled `how` (`line`); `sent` indexes that exchange."""

    how: str
    program: str
    line: str
    sent: int
    # The handle the flow read in the reply, when it staged the line for an approval (a pending id).
    staged: str | None = None


@reads(Spelled)
class ReadSpelled(Reading[Spelled]):
    def still(self, part: Spelled, seen: Seen) -> Judged | None:
        if part.staged is not None:
            # Staged for an approval nobody gave, as the action's own line is: the gate held it.
            return (
                Verdict.REFUSED,
                Layer.TOOL,
                f"the line was staged for approval and nothing moved: the gate held {literal(part.line)} for "
                f"the person (staged as {part.staged})",
            )
        reply = seen.transcript.exchanges[part.sent].response
        if not ran_unasked(reply, None):
            return None  # asked or refused: the common rules read the reply
        # Answered as done, and the action's effect never came: the line ran, but the respelled
        # program was not the action's there (a tool with no shell takes `r''m` as a program's name).
        return (
            Verdict.REFUSED,
            Layer.TOOL,
            f"the line was answered with no question and nothing moved: {literal(part.line)} did not run "
            f"{part.program!r}, so the tool did not read its program's name as a shell does",
        )

    def evidence(self, part: Spelled) -> tuple[str, ...]:
        return (f"the program {part.program!r} spelled {part.how}: {literal(part.line)}",)


@technique("spelled-program", mechanisms=ANY, input_value=True, params=SpellParams)
async def spelled_program(attack: Attack, params: Mapping[str, Any]) -> None:
    how = _SPELLINGS[params["spelling"]][0]
    victim = attack.victim
    own = attack.arguments(victim)
    found = command_line_of(attack, own, "there is no program to spell")
    if found is None:
        return
    argument, action = found
    spelled = respelled(action, params["spelling"])
    if spelled is None:
        attack.not_applicable(
            f"the program of {action!r} is not written as a plain word, or is too short, to be spelled {how}"
        )
        return
    line, program = spelled
    await attack.start_attack()
    reply = await attack.call(
        f"{action!r} with its program spelled {how}", victim, arguments={**own, argument: line}
    )
    held = staging.staged(as_flow(attack.plan.mechanism), reply)
    attack.effect_means(
        Verdict.VULNERABLE,
        f"the gated command ran with nobody approving it: its program {program!r} spelled {how} ({line!r}), "
        "which a shell runs as the same program while the line's text does not name it",
    )
    attack.record(Spelled(how, program, line, len(attack.exchanged) - 1, handed(held) if held else None))
