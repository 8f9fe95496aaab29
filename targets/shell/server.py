"""Reference MCP server: runs a command line in its root, asking the person first unless it is on the allow-list.

    python targets/shell/server.py --root DIR [--style operators|every-part|argv] [--failures error|result]
                                   [--allow PROGRAM ...] [--remember] [--flaw prefix-allow-list]

`run_command(command)` runs one line in the root through a small shell of its own
(minishell.py: a real shell's operators, on a few builtins confined to the root; never a
real program, so nothing outside the sandbox is ever reached). A read-only command on the
allow-list (ALLOWED: ls, pwd, echo, cat; `--allow` names others, `--allow-none` none) runs
unasked; anything else asks the person over MRTR, quoting the whole line, and runs once they
say yes, on the files they were asked about (a file replaced since is refused). A line naming
a path it would never act on (outside the root, through a link, a directory) is refused
before anyone is asked. With `--remember` the question offers "approve for this session" too:
a yes with that box ticked runs the same line unasked for the rest of the process (as terminal
agents' "always allow" does). The reply is what the commands wrote and their exit status: a failure
as a tool error, or with `--failures result` as an ordinary result (another hand, as many
shell servers write it). How the careful server judges a line is its style:

  operators   (the default) a line that joins commands (`;`, `&&`, `||`, `|`, a newline,
              `$(...)`, backticks) is refused before anything is asked or run: one command
              per call; a single command is judged by its program.
  every-part  every command of the line, those inside its substitutions too, is judged: the
              line runs unasked only when each is allowed, else the person is asked about it whole.
  argv        no shell at all: the line is split into words (shlex) and run as one program
              with its arguments, an operator being an argument like any other; judged by the program.
  deny-list   no allow-list: the person is asked only about a line that runs a program that
              changes files (DENIED: rm, touch), every command of it read as the shell reads it
              (quotes and escapes undone, `r''m` is rm); a line with a substitution is asked about
              whole, since what it runs is known only as it runs. Anything else runs unasked.

Flaws (each removes one defence):
  prefix-allow-list     the allow-list is matched against how the raw line starts (`cat `, `ls`), as
                        host-terminal-mcp's is, and the whole line then runs in the shell:
                        `cat /dev/null ; rm victim.txt` runs the rm unasked
  deny-list-regex       (deny-list) the denied programs are looked for in the raw text, a word
                        `\brm\b` as ai-runtime-guard's policy does: `r''m victim.txt` has no such word,
                        and the shell runs rm unasked
  deny-list-first-word  (deny-list) the line's first blank-separated word is compared to the denied
                        programs as written: `r''m`, `\rm` and `"rm"` are none of them, and the
                        shell runs rm unasked
"""

from __future__ import annotations

import argparse
import logging
import re
import secrets
import shlex
import sys
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

_HERE = Path(__file__).resolve().parent
for _folder in (_HERE, _HERE.parent / "reference"):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

import minishell  # noqa: E402
import paths  # noqa: E402
from capabilities import require_form_elicitation  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import RequestStateSecurity  # noqa: E402
from mcp.types import (  # noqa: E402
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ToolAnnotations,
)
from prompt import shown_name  # noqa: E402
from pydantic import Field  # noqa: E402

__all__ = ["ALLOWED", "FAILURES", "FLAWS", "STYLES", "build_server", "main"]

FLAWS: dict[str, str] = {
    "prefix-allow-list": "the allow-list is matched against how the raw line starts, and the whole line runs "
    "in the shell",
    "deny-list-regex": "the deny-list is looked for as words of the raw text, and the line runs in the shell",
    "deny-list-first-word": "the deny-list is compared to the raw line's first word, and the line runs in the "
    "shell",
}
STYLES = ("operators", "every-part", "argv", "deny-list")
# The programs a deny-list style asks about: those of the shell's builtins that change files.
DENIED = ("rm", "touch")
FAILURES = ("error", "result")
# The read-only programs that run without asking.
ALLOWED = ("ls", "pwd", "echo", "cat")
# The builtins whose arguments (but options) are paths.
TAKE_PATHS = ("ls", "cat", "rm", "touch")
FORM = {
    "type": "object",
    "properties": {"run": {"type": "boolean", "description": "Run this command"}},
    "required": ["run"],
}
# The question of a server that remembers approvals for its session (`--remember`).
REMEMBERING_FORM = {
    **FORM,
    "properties": {
        **FORM["properties"],
        "remember": {"type": "boolean", "description": "Approve this command line for this session"},
    },
}


@dataclass(frozen=True, slots=True)
class Asked:
    """What the person was asked about: the line, and the files it named as they were then."""

    line: str
    files: Mapping[str, paths.Identity]


class Judged(Exception):
    """The line is refused before anything is asked or run."""


def build_server(
    root: str | Path,
    *,
    style: str = "operators",
    failures: str = "error",
    allowed: Collection[str] = ALLOWED,
    remember: bool = False,
    flaws: Collection[str] = (),
) -> MCPServer:
    if unknown := sorted(set(flaws) - FLAWS.keys()):
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(FLAWS)}")
    if style not in STYLES or failures not in FAILURES:
        raise ValueError(f"--style is one of {', '.join(STYLES)}, --failures one of {', '.join(FAILURES)}")
    policy = paths.PathPolicy.create(root)
    prefixes = "prefix-allow-list" in flaws
    if {"deny-list-regex", "deny-list-first-word"} & set(flaws) and style != "deny-list":
        raise ValueError("the deny-list flaws are flaws of --style deny-list")
    denied_word = re.compile(r"\b(?:" + "|".join(DENIED) + r")\b")
    # The flaw runs every line in the shell, whatever the style.
    argv_style = style == "argv" and not prefixes
    asked: dict[str, Asked] = {}
    # `--remember`: the lines the person approved for this session, run unasked from then on.
    remembered: set[str] = set()
    server = MCPServer("shell-reference", request_state_security=RequestStateSecurity.ephemeral(ttl=300))

    allow_list = tuple(allowed)

    def runs_unasked(line: str) -> bool:
        """Whether the line runs unasked; Judged when the style refuses it outright."""
        if line in remembered:
            return True
        if prefixes:
            # FLAW prefix-allow-list: the start of the raw line is judged; the shell runs all of it.
            return any(line == p or line.startswith((f"{p} ", f"{p}\t")) for p in allow_list)
        if argv_style:
            return _argv(line)[0] in allow_list
        if "deny-list-regex" in flaws:
            # FLAW deny-list-regex: the text is searched, not the line the shell reads (r''m is rm).
            return denied_word.search(line) is None
        if "deny-list-first-word" in flaws:
            # FLAW deny-list-first-word: the first word as written, quotes and escapes left in it.
            return line.split()[0] not in DENIED
        script = _parsed(line)
        if style == "deny-list":
            if _substitutes(script):
                return False  # what a substitution runs is known only as it runs: the person is asked
            return all(minishell.program(command) not in DENIED for command in minishell.commands(script))
        if style == "operators":
            if joined := _joins(script):
                raise Judged(
                    f"refused: the line joins commands ({joined}); send one command per call, and a command "
                    "outside the allow-list is asked about on its own"
                )
            return minishell.program(script[0][1][0]) in allow_list
        return all(minishell.program(command) in allow_list for command in minishell.commands(script))

    def run(line: str, files: Mapping[str, paths.Identity]) -> str:
        shell = minishell.Shell(policy, files)
        ran = shell.argv(_argv(line)) if argv_style else shell.run(line)
        text = f"exit status {ran.status}"
        if ran.out:
            text += f"\nstdout:\n{ran.out}"
        if ran.err:
            text += f"\nstderr:\n{ran.err}"
        if ran.status and failures == "error":
            raise ToolError(text)
        return text

    def commands(line: str) -> list[list[str]]:
        """The line's commands, each as its words written (a word a substitution makes is known only as it runs)."""
        if argv_style:
            return [_argv(line)]
        return [
            ["".join(str(p) for p in word.parts) for word in command if _literal(word)]
            for command in minishell.commands(_parsed(line))
        ]

    def named_files(line: str) -> dict[str, paths.Identity]:
        """Every path the line's commands take, checked as they will be: one never acted on is refused now."""
        found: dict[str, paths.Identity] = {}
        for program, *args in commands(line):
            for arg in args if program in TAKE_PATHS else ():
                if arg.startswith("-") or arg == "/dev/null":
                    continue
                try:
                    target = policy.resolve(arg)
                except paths.Missing:
                    continue  # nothing to delete yet, or a file touch makes
                except paths.Refused as exc:
                    raise Judged(f"refused: {exc}") from None
                found[target.rel] = target.identity
        return found

    async def run_command(
        command: Annotated[str, Field(description="The command line to run in the server's folder.")],
        ctx: Context,
    ) -> str | InputRequiredResult:
        """Run a command line in the server's folder. Read-only commands run at once; any other asks the user first."""
        line = command.strip()
        if not line:
            raise ToolError("refused: no command given")
        answer = (ctx.input_responses or {}).get("run")
        if answer is None:
            try:
                if runs_unasked(line):
                    return run(line, {})
                files = named_files(line)
            except Judged as exc:
                raise ToolError(str(exc)) from None
            require_form_elicitation(ctx.client_capabilities)  # -32021 to a client that cannot be asked
            nonce = secrets.token_hex(16)
            asked[nonce] = Asked(line, files)
            question = (
                f'Run this command in the server\'s folder? "{shown_name(line)}" '
                "It may change or delete files there. Tick the box to run it."
            )
            request = ElicitRequest(
                params=ElicitRequestFormParams(
                    mode="form", message=question, requested_schema=REMEMBERING_FORM if remember else FORM
                )
            )
            return InputRequiredResult(input_requests={"run": request}, request_state=nonce)
        was = asked.pop(ctx.request_state or "", None)
        if was is None:
            raise ToolError("refused: that confirmation is unknown or already used")
        if was.line != line:
            raise ToolError("refused: that confirmation was for another command")
        if (
            not isinstance(answer, ElicitResult)
            or answer.action != "accept"
            or (answer.content or {}).get("run") is not True
        ):
            return "Not run: the person did not approve it."
        if remember and (answer.content or {}).get("remember") is True:
            remembered.add(line)
        return run(line, was.files)

    server.tool(
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False),
    )(run_command)
    return server


def _argv(line: str) -> list[str]:
    try:
        argv = shlex.split(line)
    except ValueError as exc:
        raise Judged(f"refused: not a command line ({exc})") from None
    if not argv:
        raise Judged("refused: no command given")
    return argv


def _parsed(line: str) -> minishell.Script:
    try:
        return minishell.parse(line)
    except minishell.Unsupported as exc:
        raise Judged(f"refused: {exc} is not run here") from None


def _literal(word: minishell.Word) -> bool:
    """Whether a word is known before the line runs: no substitution makes any of it."""
    return not any(isinstance(part, minishell.Sub) for part in word.parts)


def _joins(script: minishell.Script) -> str:
    """How a line joins more than one command, named for the refusal ("" for a single command)."""
    found = [repr(join) for join, _ in script[1:]]
    found += ["'|'" for _, pipeline in script if len(pipeline) > 1]
    if _substitutes(script):
        found.append("a command substitution")
    return ", ".join(dict.fromkeys(found))


def _substitutes(script: minishell.Script) -> bool:
    """Whether a word of the line is made by a command substitution (`$(...)`, backticks)."""
    return any(
        isinstance(part, minishell.Sub)
        for command in minishell.commands(script)
        for word in command
        for part in word.parts
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--style", choices=STYLES, default="operators")
    parser.add_argument("--failures", choices=FAILURES, default="error")
    parser.add_argument("--allow", action="append", metavar="PROGRAM", help="a program that runs unasked")
    parser.add_argument("--allow-none", action="store_true", help="every command asks")
    parser.add_argument("--remember", action="store_true", help="offer to approve a line for this session")
    parser.add_argument("--flaw", action="append", default=[], choices=sorted(FLAWS))
    args = parser.parse_args()
    allowed = () if args.allow_none else tuple(args.allow or ALLOWED)
    build_server(
        args.root,
        style=args.style,
        failures=args.failures,
        allowed=allowed,
        remember=args.remember,
        flaws=args.flaw,
    ).run()


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
