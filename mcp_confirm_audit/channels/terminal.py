r"""`terminal:` the person answers on the target's own terminal.

    tty: true                                      # top level: the target runs under a pseudo-terminal
    confirmation:
      kind: waits
      waits:
        human: [{terminal: {expect: 'allow\? \[y/N\]', answer: y}}]
        decline: [{terminal: {expect: 'allow\? \[y/N\]', answer: n}}]

With `tty: true` the harness gives the target a pseudo-terminal of its own as
its controlling terminal (`/dev/tty`), keeps the other end (`Pty`), and plays
the person at it: a step waits, within its bound, for its `expect` pattern in
what the target wrote since the last answer, then types `answer` and Enter.
Without `tty: true` a target has no controlling terminal at all (it is started
in a session of its own), so a server that asks there finds nobody, and must
fail closed. The text up to the prompt is what the person saw (`Taken.shown`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import struct
import sys
import termios
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import anyio
from pydantic import field_validator

from ..profile.contract import Keys, key
from .base import SAID, HumanFailed, StepKeys, Taken, Where, a_regex, one_line, step_kind

_POLL = 0.02  # seconds between reads of the terminal while a prompt is awaited
_KEEP = 64 * 1024  # characters of the terminal's output kept between answers
# The terminal's own escapes (colours, cursor moves) are not what the person reads as words.
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")


class Pty:
    """A pseudo-terminal: the target's end is its controlling terminal, this end is the person's."""

    def __init__(self) -> None:
        self.master, self._slave = os.openpty()
        self.slave_path = os.ttyname(self._slave)
        os.set_blocking(self.master, False)
        self._seen = ""
        self.closed = False

    def hosted(self, argv: Sequence[str]) -> list[str]:
        """`argv` started on this terminal: a small host makes it the controlling terminal, then execs it."""
        return [sys.executable, "-m", f"{__package__}.pty_host", self.slave_path, "--", *argv]

    def _drain(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # EIO: nobody holds the other end any more
                return
            if not chunk:
                return
            self._seen = (self._seen + chunk.decode(errors="replace"))[-_KEEP:]

    async def expect(self, pattern: re.Pattern[str], timeout: float) -> str:
        with anyio.move_on_after(timeout):
            while not self.closed:
                self._drain()
                hit = pattern.search(self._seen)
                if hit is not None:
                    shown, self._seen = self._seen[: hit.end()], self._seen[hit.end() :]
                    return shown
                await anyio.sleep(_POLL)
        said = one_line(_ESCAPES.sub("", self._seen))[-SAID:]
        raise HumanFailed(
            f"no prompt /{pattern.pattern}/ on the target's terminal within {timeout:g}s"
            + (f"; it showed: {said}" if said else "; it showed nothing")
        )

    def forget(self) -> None:
        """Set aside what the terminal showed so far: it belonged to a call that is over."""
        self._drain()
        self._seen = ""

    def answer(self, text: str) -> None:
        self._drain()
        self._seen = ""
        os.write(self.master, (text + "\n").encode())

    async def type_ahead(self, text: str, timeout: float) -> None:
        """Type `text` and Enter with no question shown; back once the terminal holds it as unread input.

        The line discipline takes what is written here a moment later, on a thread of the kernel's:
        the call that follows is sent only once the line is there for the target to read.
        """
        typed = (text + "\n").encode()
        waiting = self.unread()
        os.write(self.master, typed)
        with anyio.move_on_after(timeout):
            while not self.closed and self.unread() < waiting + len(typed):
                await anyio.sleep(_POLL)
            return
        raise HumanFailed(f"what was typed ahead did not reach the target's terminal within {timeout:g}s")

    def unread(self) -> int:
        """Bytes typed on this terminal that no process has read (its input queue): 0 once closed."""
        if self.closed:
            return 0
        try:
            queued = fcntl.ioctl(self._slave, termios.FIONREAD, struct.pack("i", 0))
        except OSError:
            return 0
        return int(struct.unpack("i", queued)[0])

    def discard_unread(self) -> int:
        """Throw away what was typed and never read, so it answers no later question; how many bytes."""
        left = self.unread()
        if left and not self.closed:
            with contextlib.suppress(OSError, termios.error):
                termios.tcflush(self._slave, termios.TCIFLUSH)
        return left

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            for fd in (self.master, self._slave):
                with contextlib.suppress(OSError):
                    os.close(fd)


@dataclass(frozen=True, slots=True)
class Answer:
    expect: re.Pattern[str]
    answer: str
    # With servers:, the server whose terminal it answers (unset: the first).
    server: str | None = None

    @property
    def kind(self) -> str:
        return "terminal"

    # The prompt is read and answered in one step: a change between the two is made inside it.
    reads_then_answers: ClassVar[bool] = True

    async def take(self, where: Where) -> Taken:
        if where.terminal is None:
            raise HumanFailed(
                "the person answers on the target's terminal, but it has none: set tty: true in the profile"
            )
        shown = await where.terminal.expect(self.expect, where.timeout)
        await where.reading_done()
        typed = where.filled(self.answer)
        where.terminal.answer(typed)
        read = _ESCAPES.sub("", shown)
        # What the person saw is kept raw: an escape sequence in it is what the checks look for.
        return Taken(
            f"the terminal asked {one_line(read)[-SAID:]!r}; typed {typed!r}", shown=shown, medium="terminal"
        )

    def typed_ahead(self) -> TypedAhead:
        """This answer typed before its question is shown, on the same server's terminal."""
        return TypedAhead(self.answer, self.server)

    def unread_after(self) -> Unread:
        """What is left unread on this answer's terminal once the call is over, thrown away."""
        return Unread(self.server)


@dataclass(frozen=True, slots=True)
class TypedAhead:
    """Not an answer to a question: the person's answer typed before any question is shown (`typed`: bytes).

    A `y` typed twice for an earlier question, or pasted, waits in the terminal's input; a server that
    reads its answer without throwing away what came before takes it as the answer to its next question.
    """

    answer: str
    server: str | None = None

    @property
    def kind(self) -> str:
        return "terminal"

    async def take(self, where: Where) -> Taken:
        if where.terminal is None:
            raise HumanFailed(
                "the person answers on the target's terminal, but it has none: set tty: true in the profile"
            )
        typed = where.filled(self.answer)
        await where.terminal.type_ahead(typed, where.timeout)
        said = f"typed {typed!r} and Enter on the target's terminal before any question was shown"
        return Taken(said, values={"typed": str(len((typed + "\n").encode()))})


@dataclass(frozen=True, slots=True)
class Unread:
    """Not a person's step: what was typed on the terminal and never read, thrown away (`unread`: how much).

    Typed ahead for a call that is over, it must answer no later question.
    """

    server: str | None = None

    @property
    def kind(self) -> str:
        return "terminal"

    async def take(self, where: Where) -> Taken:
        left = where.terminal.discard_unread() if where.terminal is not None else 0
        return Taken("", values={"unread": str(left)})


@dataclass(frozen=True, slots=True)
class Forget:
    """Not a person's step: a call that waited is over, and what its terminal showed with it."""

    @property
    def kind(self) -> str:
        return "terminal"

    async def take(self, where: Where) -> Taken:
        if where.terminal is not None:
            where.terminal.forget()
        return Taken("")


class PromptKeys(Keys):
    """The prompt the person waits for on the target's terminal, and what they type."""

    expect: str = key(
        ...,
        "A regular expression for the prompt, looked for in what the target wrote since the last answer.",
        accepts="a regular expression",
        example="allow\\? \\[y/N\\]",
        min_length=1,
    )
    answer: str | int | bool = key(
        ...,
        "What the person types, then Enter (true is y, false is n).",
        accepts="text (or a number, or true / false)",
        example="y",
    )

    _expect = field_validator("expect")(a_regex)


@step_kind("terminal")
class TerminalStep(StepKeys):
    """`terminal:` the person answers a prompt on the target's own terminal (with tty: true)."""

    terminal: PromptKeys = key(
        ...,
        "The prompt and the answer.",
        accepts="a mapping with expect and answer",
        example={"expect": "allow\\? \\[y/N\\]", "answer": "y"},
    )

    reaches_server: ClassVar[bool] = True

    def step(self, where: str) -> Answer:
        answer = self.terminal.answer
        typed = (
            answer
            if isinstance(answer, str)
            else ("y" if answer is True else "n" if answer is False else str(answer))
        )
        return Answer(re.compile(self.terminal.expect), typed)
