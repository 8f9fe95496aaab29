"""A small shell for the shell reference server: a real shell's operators, run on builtins confined to the root.

A reference server must never run anything outside its sandbox, and a real shell runs anything,
so this is not one. It reads a line as a POSIX shell does (words, quotes and escapes, `;`, `&&`,
`||`, `|`, newlines, `$(...)` and backticks) and runs each command as one of a few builtins
(true, false, echo, pwd, ls, cat, rm, touch) whose every path goes through the reference server's
PathPolicy: inside the root, reached through real directories only. What it does not read
(redirections, background jobs, subshells, variables) it refuses whole: nothing of the line runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import paths

__all__ = [
    "BUILTINS",
    "Command",
    "Ran",
    "Script",
    "Shell",
    "Sub",
    "Unsupported",
    "Word",
    "commands",
    "parse",
    "program",
]


class Unsupported(Exception):
    """A line this shell does not run: the message says which part, and nothing of it ran."""


@dataclass(frozen=True, slots=True)
class Sub:
    """A command substitution: the line inside `$(...)` or backticks, run when its word is expanded."""

    source: str


@dataclass(frozen=True, slots=True)
class Word:
    """One word as written: literal text and substitutions, in order; `quoted` keeps an empty one."""

    parts: tuple[str | Sub, ...]
    quoted: bool = False


Command = tuple[Word, ...]
Pipeline = tuple[Command, ...]
# Each pipeline with the operator that joins it to the one before (";" for the first).
Script = tuple[tuple[str, Pipeline], ...]


def parse(line: str) -> Script:
    """The line as a list of pipelines, or Unsupported naming what this shell does not read."""
    script: list[tuple[str, Pipeline]] = []
    pipeline: list[Command] = []
    command: list[Word] = []
    join = ";"
    for token in _Tokens(line).read():
        if isinstance(token, Word):
            command.append(token)
            continue
        if token == "|":
            if not command:
                raise Unsupported("a pipe with no command before it")
            pipeline.append(tuple(command))
            command = []
            continue
        if command:
            pipeline.append(tuple(command))
            command = []
        elif pipeline:
            raise Unsupported("a pipe with no command after it")
        if pipeline:
            script.append((join, tuple(pipeline)))
            pipeline, join = [], token
        elif token != "\n":
            raise Unsupported(f"{token!r} with no command before it")
    if command:
        pipeline.append(tuple(command))
    elif pipeline:
        raise Unsupported("a pipe with no command after it")
    if pipeline:
        script.append((join, tuple(pipeline)))
    elif join in ("&&", "||"):
        raise Unsupported(f"{join!r} with no command after it")
    return tuple(script)


def commands(script: Script) -> Iterator[Command]:
    """Every command the line may run, those inside its substitutions too."""
    for _, pipeline in script:
        for command in pipeline:
            yield command
            for word in command:
                for part in word.parts:
                    if isinstance(part, Sub):
                        yield from commands(parse(part.source))


def program(command: Command) -> str | None:
    """The program a command names, as written; None when a substitution makes it."""
    first = command[0].parts if command else ()
    if any(isinstance(part, Sub) for part in first):
        return None
    return "".join(str(part) for part in first)


class _Tokens:
    """The words and operators of a line, read left to right as a POSIX shell reads them."""

    def __init__(self, line: str) -> None:
        self.line, self.at = line, 0
        self.tokens: list[Word | str] = []
        self.parts: list[str | Sub] = []
        self.text: list[str] = []
        self.quoted = self.started = False

    def read(self) -> list[Word | str]:
        line = self.line
        while self.at < len(line):
            ch, two = line[self.at], line[self.at : self.at + 2]
            if ch in " \t":
                self._end_word()
                self.at += 1
            elif ch == "#" and not self.started:
                end = line.find("\n", self.at)
                self.at = len(line) if end < 0 else end
            elif two in ("&&", "||"):
                self._operator(two)
            elif ch in ";|\n":
                self._operator(ch)
            elif ch == "&":
                raise Unsupported("a background job ('&')")
            elif ch in "<>":
                raise Unsupported(f"a redirection ({ch!r})")
            elif ch in "()":
                raise Unsupported("a subshell ('(')")
            else:
                self._word_char(ch)
        self._end_word()
        return self.tokens

    def _operator(self, op: str) -> None:
        self._end_word()
        self.tokens.append(op)
        self.at += len(op)

    def _word_char(self, ch: str) -> None:
        line = self.line
        self.started = True
        if ch == "\\":
            if line[self.at + 1 : self.at + 2] != "\n":  # backslash-newline joins two lines
                self.text.append(line[self.at + 1 : self.at + 2])
            self.at += 2
        elif ch == "'":
            end = line.find("'", self.at + 1)
            if end < 0:
                raise Unsupported("a quote that is never closed")
            self.text.append(line[self.at + 1 : end])
            self.quoted, self.at = True, end + 1
        elif ch == '"':
            self._double_quoted()
        elif ch == "`" or line.startswith("$(", self.at):
            self._substitution()
        elif ch == "$" and line[self.at + 1 : self.at + 2] not in ("", " ", "\t", "\n"):
            raise Unsupported("a parameter expansion ('$')")
        else:
            self.text.append(ch)
            self.at += 1

    def _double_quoted(self) -> None:
        line = self.line
        self.quoted = True
        self.at += 1
        while self.at < len(line) and line[self.at] != '"':
            ch = line[self.at]
            if ch == "\\" and line[self.at + 1 : self.at + 2] in ('"', "\\", "$", "`", "\n"):
                self.text.append(line[self.at + 1].replace("\n", ""))
                self.at += 2
            elif ch == "`" or line.startswith("$(", self.at):
                self._substitution()
            elif ch == "$" and line[self.at + 1 : self.at + 2] not in ("", " ", '"'):
                raise Unsupported("a parameter expansion ('$')")
            else:
                self.text.append(ch)
                self.at += 1
        if self.at >= len(line):
            raise Unsupported("a quote that is never closed")
        self.at += 1

    def _substitution(self) -> None:
        line = self.line
        if line[self.at] == "`":
            start = self.at + 1
            end = line.find("`", start)
            if end < 0:
                raise Unsupported("a backtick that is never closed")
            after = end + 1
        else:
            start = self.at + 2
            end = _closing(line, start)
            after = end + 1
        self._flush_text()
        self.parts.append(Sub(line[start:end]))
        self.at = after

    def _flush_text(self) -> None:
        if self.text:
            self.parts.append("".join(self.text))
            self.text = []

    def _end_word(self) -> None:
        self._flush_text()
        if self.started:
            self.tokens.append(Word(tuple(self.parts), self.quoted))
        self.parts, self.quoted, self.started = [], False, False


def _closing(line: str, start: int) -> int:
    """Where the `)` that closes a `$(` opened just before `start` is, quotes and nesting read."""
    depth, at = 1, start
    while at < len(line):
        ch = line[at]
        if ch == "'":
            at = line.find("'", at + 1)
            if at < 0:
                break
        elif ch == "\\":
            at += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return at
        at += 1
    raise Unsupported("a '$(' that is never closed")


@dataclass(frozen=True, slots=True)
class Ran:
    """What a line did: its exit status and what it wrote."""

    status: int
    out: str = ""
    err: str = ""


@dataclass
class Shell:
    """Runs a line's commands as builtins, every path confined by `policy` to the root.

    `expected`: the identity each file named had when the person was asked about the line, by
    its path from the root: a file replaced since is not the one they approved, and is refused.
    """

    policy: paths.PathPolicy
    expected: Mapping[str, paths.Identity] = field(default_factory=dict)

    def run(self, line: str) -> Ran:
        try:
            return self.script(parse(line))
        except Unsupported as exc:
            return Ran(2, "", f"sh: {exc}: not run\n")

    def argv(self, argv: Sequence[str]) -> Ran:
        """One program and its arguments, with no shell: an operator is an argument like any other."""
        return self._builtin(list(argv), "")

    def script(self, script: Script) -> Ran:
        status, out, err = 0, [], []
        for join, pipeline in script:
            if (join == "&&" and status != 0) or (join == "||" and status == 0):
                continue  # a skipped command leaves the status as it was
            ran = self._pipeline(pipeline)
            status = ran.status
            out.append(ran.out)
            err.append(ran.err)
        return Ran(status, "".join(out), "".join(err))

    def _pipeline(self, pipeline: Pipeline) -> Ran:
        stdin, err, ran = "", [], Ran(0)
        for command in pipeline:
            ran = self._command(command, stdin)
            stdin = ran.out
            err.append(ran.err)
        return Ran(ran.status, ran.out, "".join(err))

    def _command(self, command: Command, stdin: str) -> Ran:
        argv: list[str] = []
        errors: list[str] = []
        for word in command:
            argv += self._expand(word, errors)
        if not argv:
            return Ran(0, "", "".join(errors))
        ran = self._builtin(argv, stdin)
        return Ran(ran.status, ran.out, "".join(errors) + ran.err)

    def _expand(self, word: Word, errors: list[str]) -> list[str]:
        """The arguments a word stands for: substitutions run, an unquoted one split on blanks."""
        text = []
        for part in word.parts:
            if isinstance(part, Sub):
                ran = self.run(part.source)
                errors.append(ran.err)
                text.append(ran.out.rstrip("\n"))
            else:
                text.append(part)
        joined = "".join(text)
        if word.quoted or not any(isinstance(part, Sub) for part in word.parts):
            return [joined]
        return joined.split()

    def _builtin(self, argv: list[str], stdin: str) -> Ran:
        name, args = argv[0], argv[1:]
        run = BUILTINS.get(name)
        if run is None:
            return Ran(127, "", f"sh: {name}: command not found\n")
        return run(self, args, stdin)

    # -- the builtins --------------------------------------------------------

    def _true(self, args: list[str], stdin: str) -> Ran:
        return Ran(0)

    def _false(self, args: list[str], stdin: str) -> Ran:
        return Ran(1)

    def _echo(self, args: list[str], stdin: str) -> Ran:
        return Ran(0, " ".join(args) + "\n")

    def _pwd(self, args: list[str], stdin: str) -> Ran:
        return Ran(0, f"{self.policy.root}\n")

    def _ls(self, args: list[str], stdin: str) -> Ran:
        names = [a for a in args if not a.startswith("-")]
        if not names or names == ["."]:
            return Ran(0, "".join(f"{name}\n" for name in sorted(os.listdir(self.policy.root))))
        out, err, status = [], [], 0
        for name in names:
            try:
                self.policy.resolve(name)
                out.append(f"{name}\n")
            except paths.Refused as exc:
                err.append(f"ls: cannot access {name!r}: {exc}\n")
                status = 2
        return Ran(status, "".join(out), "".join(err))

    def _cat(self, args: list[str], stdin: str) -> Ran:
        names = [a for a in args if a != "-"]
        if not names:
            return Ran(0, stdin)
        out, err, status = [], [], 0
        for name in names:
            if name == "/dev/null":  # read as the empty file it is, though it is not under the root
                continue
            try:
                out.append(self.policy.resolve(name).real.read_text(errors="replace"))
            except (paths.Refused, OSError) as exc:
                err.append(f"cat: {name}: {exc}\n")
                status = 1
        return Ran(status, "".join(out), "".join(err))

    def _rm(self, args: list[str], stdin: str) -> Ran:
        err, status = [], 0
        for name in (a for a in args if not a.startswith("-")):
            try:
                target = self.policy.resolve(name)
                paths.unlink_beneath(self.policy.root, target.parts, self._identity(target))
            except paths.Refused as exc:
                err.append(f"rm: cannot remove {name!r}: {exc}\n")
                status = 1
        return Ran(status, "", "".join(err))

    def _touch(self, args: list[str], stdin: str) -> Ran:
        err, status = [], 0
        for name in (a for a in args if not a.startswith("-")):
            try:
                try:
                    target = self.policy.resolve(name)
                except paths.Missing:
                    paths.create_beneath(self.policy.root, self.policy.place(name), b"")
                else:
                    paths.write_beneath(
                        self.policy.root, target.parts, self._identity(target), target.real.read_bytes()
                    )
            except (paths.Refused, OSError) as exc:
                err.append(f"touch: cannot touch {name!r}: {exc}\n")
                status = 1
        return Ran(status, "", "".join(err))

    def _identity(self, target: paths.Target) -> paths.Identity:
        """What a file must still be to be acted on: as the person was asked about it, else as just found."""
        return self.expected.get(target.rel, target.identity)


BUILTINS: dict[str, Callable[[Shell, list[str], str], Ran]] = {
    "true": Shell._true,
    "false": Shell._false,
    "echo": Shell._echo,
    "pwd": Shell._pwd,
    "ls": Shell._ls,
    "cat": Shell._cat,
    "rm": Shell._rm,
    "touch": Shell._touch,
}
