"""`command:` the person runs a command line in the root, and `sign:` a command that signs a challenge.

    - command: "approve-cli {id} approved"
    - command: "device card {id}"       # shows: true, it only shows the person the card
      shows: true
    - sign: {command: "wallet sign --key {root}/owner.key {challenge}"}
      save: evidence

The line is split into words first and the values are put into each word
after, so a value the target chose (an id, a challenge) never adds a word of
its own. A step's value is what the command printed on stdout, stripped; its
stderr is evidence only.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import anyio

from .base import Fail, HumanFailed, Save, Taken, Where, one_line, only_keys, parse_save, step_kind


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

    def with_id(self, pending_id: str) -> Command:
        return replace(self, pending_id=pending_id)

    def words(self, where: Where) -> list[str]:
        extra = {} if self.pending_id is None else {"id": self.pending_id}
        where = where.with_values(extra) if extra else where
        return [where.filled(word) for word in shlex.split(self.line)]

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
        return Taken(
            f"ran {shown!r}: {said}",
            self.save.values(out, f"what {shown!r} printed"),
            out if self.shows else None,
        )


@step_kind("command")
def _command(raw: Mapping[str, Any], where: str, fail: Fail, source: str) -> Command:
    only_keys(raw, {"command", "shows"}, where, fail)
    line, shows = raw["command"], raw.get("shows", False)
    if not isinstance(line, str) or not line.strip():
        raise fail(f"{where}.command must be a command line")
    if not isinstance(shows, bool):
        raise fail(
            f"{where}.shows must be true (the command only shows the person what they are asked) or false"
        )
    return Command(line, save=parse_save(raw.get("save"), where, fail), shows=shows)


@step_kind("sign")
def _sign(raw: Mapping[str, Any], where: str, fail: Fail, source: str) -> Command:
    only_keys(raw, {"sign"}, where, fail)
    said = raw["sign"]
    line = said.get("command") if isinstance(said, Mapping) else said
    if not isinstance(line, str) or "{challenge}" not in line:
        raise fail(
            f"{where}.sign must be {{command: '... {{challenge}} ...'}}: the command that signs the challenge and prints the approval"
        )
    save = parse_save(raw.get("save"), where, fail)
    # A signature nobody keeps approves nothing: its stdout is the evidence unless the step says otherwise.
    return Command(line, save=save if save.names else Save(whole="evidence"), kind="sign")
