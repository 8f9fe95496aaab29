"""`command:` the person runs a command line in the root, and `sign:` a command that signs a challenge.

    - command: "approve-cli {id} approved"
    - command: "device card {id}"       # shows: true, it only shows the person the card
      shows: true
    - sign: {command: "wallet sign --key {root}/owner.key {challenge}"}
      save: evidence

The line is split into words first and the values are put into each word
after, so a value the target chose (an id, a challenge) never adds a word of
its own. Its program is found as the target's command's is: `python` is the
interpreter running the audit, and a program beside it is found there. A step's value is what the command printed on stdout, stripped; its
stderr is evidence only.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field, replace
from typing import Annotated, Any

import anyio
from pydantic import Discriminator, Field, Tag, model_validator

from ..profile.contract import Keys, key
from ..profile.programs import beside_interpreter
from .base import HumanFailed, Save, StepKeys, Taken, Where, one_line, step_kind


@dataclass(frozen=True, slots=True)
class Command:
    """A command line the person runs, with `{id}`, `{root}` and any name saved before it."""

    line: str
    # Put in after the line is split into words (the old way to give the id; `Where.values` is the new).
    pending_id: str | None = None
    save: Save = field(default_factory=Save)
    # What the step is called in evidence: `command`, or `sign` for a command that signs a challenge.
    kind: str = "command"
    # The command only shows the person what they are asked (a device's card) and approves nothing:
    # its output is what they read, and it may be run to see that without approving.
    shows: bool = False
    # Names in the line that are the person's credentials (a pairing code, a key): never the agent's.
    credentials: tuple[str, ...] = ()

    def with_id(self, pending_id: str) -> Command:
        return replace(self, pending_id=pending_id)

    def words(self, where: Where) -> list[str]:
        extra = {} if self.pending_id is None else {"id": self.pending_id}
        where = where.with_values(extra) if extra else where
        words = [where.filled(word) for word in shlex.split(self.line)]
        # Found as the target's command is: `python` is the interpreter running the audit, and a
        # program installed beside it (the server's own CLI) is found there without activating its venv.
        return [beside_interpreter(words[0]), *words[1:]] if words else words

    def __str__(self) -> str:
        # For evidence only: what the person typed, as they would read it.
        return self.line if self.pending_id is None else self.line.replace("{id}", self.pending_id)

    async def take(self, where: Where) -> Taken:
        words = self.words(where)
        shown = self.line
        if self.pending_id is not None:
            shown = shown.replace("{id}", self.pending_id)
        if not words:
            raise HumanFailed("the human's command is empty")
        try:
            with anyio.fail_after(where.timeout):
                done = await anyio.run_process(words, cwd=where.root, check=False)
        except TimeoutError:
            raise HumanFailed(
                f"the human's command did not finish within {where.timeout:g}s: {shown}"
            ) from None
        except OSError as exc:
            raise HumanFailed(f"the human's command could not run ({exc}): {shown}") from None
        out = done.stdout.decode(errors="replace").strip()
        err = done.stderr.decode(errors="replace").strip()
        said = one_line(" ".join(part for part in (out, err) if part))[:300]
        if done.returncode != 0:
            raise HumanFailed(f"the human's command exited {done.returncode}: {said}")
        # What a command line the person runs prints, they read on their terminal: no markup is
        # rendered there (a link is text), but what acts on a terminal (escapes, line breaks) does.
        return Taken(
            f"ran {_ends_of(shown)!r}: {said}",
            self.save.values(out, f"what {shown!r} printed"),
            out if self.shows else None,
            medium="terminal",
        )


@step_kind("command")
class CommandStep(StepKeys):
    """`command:` a command line the person runs in the root."""

    command: str = key(
        ...,
        "A command line the person runs in the root ({root}); {id}, {challenge} and names saved before it "
        "are put into its words.",
        accepts="a command line",
        example="approve-cli {id} approved",
        pattern=r"\S",
    )
    shows: bool = key(
        False,
        "The command only shows the person what they are asked (a device's card) and approves nothing; "
        "what it prints is read as a terminal shows it.",
        accepts="true or false",
        example=True,
    )

    credentials: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] | None = key(
        None,
        "Names in the line that are the person's credentials (a pairing code, a device key): "
        "agent-reachable-approval runs the step without them, and takes the person's other reads as known.",
        accepts="a list of names the line says as {NAME}",
        example=["code"],
    )

    @model_validator(mode="after")
    def _credentials_in_the_line(self) -> CommandStep:
        for name in self.credentials or ():
            if f"{{{name}}}" not in self.command:
                raise ValueError(
                    f"names credential {name!r}, which its command line does not say as {{{name}}}"
                )
        return self

    def step(self, where: str) -> Command:
        return Command(
            self.command, save=self.saved(), shows=self.shows, credentials=tuple(self.credentials or ())
        )


# What a signature is over: the challenge handed out (in a pending flow, the pending id is one too).
_SIGNED = r"\{challenge\}|\{id\}"


class SignKeys(Keys):
    """The command that signs a challenge."""

    command: str = key(
        ...,
        "The command that signs the challenge and prints the approval.",
        accepts="a command line with {challenge} (or, in a pending flow, {id})",
        example="signer --key {root}/owner.key {challenge}",
        pattern=_SIGNED,
    )


def _sign_form(value: Any) -> str:
    return "line" if isinstance(value, str) else "keys"


@step_kind("sign")
class SignStep(StepKeys):
    """`sign:` a command that signs the challenge; what it prints is saved as `evidence` unless said."""

    sign: Annotated[
        Annotated[Annotated[str, Field(pattern=_SIGNED)], Tag("line")] | Annotated[SignKeys, Tag("keys")],
        Discriminator(_sign_form),
    ] = key(
        ...,
        "The command that signs the challenge and prints the approval.",
        accepts="{command: ...} (or a command line) with {challenge} (or, in a pending flow, {id})",
        example={"command": "signer --key {root}/owner.key {challenge}"},
    )

    def saved(self) -> Save:
        # A signature nobody keeps approves nothing: its stdout is the evidence unless the step says otherwise.
        save = super().saved()
        return save if save.names else Save(whole="evidence")

    def step(self, where: str) -> Command:
        line = self.sign if isinstance(self.sign, str) else self.sign.command
        return Command(line, save=self.saved(), kind="sign")


# A command line in evidence: its head (the program) and its tail (the arguments that say what it
# did), never so long that what it printed is cut from the evidence line that follows it. A profile's
# `{profile_dir}` makes the middle a checkout's path, as long as the checkout's folder is deep.
_COMMAND_SHOWN = 96


def _ends_of(line: str) -> str:
    if len(line) <= _COMMAND_SHOWN:
        return line
    head = _COMMAND_SHOWN // 4
    return f"{line[:head]}…{line[len(line) - (_COMMAND_SHOWN - head - 1) :]}"
