r"""`read:` what the server sent the person: a request at the sink, the target's output, a file in the root.

    - read: {from: sink, json: links.approve}            # the newest webhook body with that field
      save: approve_url
    - read: {from: stderr, pattern: 'pairing code (\d{6})'}
      save: code
    - read: {from: "file:outbox/card.txt", pattern: 'card (\w+)', containing: "{id}"}

`from` is `sink` (the bodies the harness's loopback sink received), `stderr`
or `stdout` (the target's output file; over stdio, stdout is the protocol and
cannot be read), or `file:PATH` (a file under the root; with `*`, the newest file it matches: a
message dropped into an outbox). `json` is a dotted
path into a JSON body or file, `pattern` a regular expression (its first
group, or the whole match); with both, the pattern is looked for in the
field. `containing` keeps only what holds that text (`{id}` filled in), so a
step reads the message about its own action. The newest match wins, and the
step waits for one within its bound: a message that never comes fails it.
What the person read (a webhook body, the line, the file) is `Taken.shown`:
the text the prompt-forging checks judge; `reads: text` says the person reads
that field of the JSON as text (a chat app's message), not the body as JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import anyio
from pydantic import field_validator, model_validator

from ..profile.contract import Keys, key
from .base import SAID, HumanFailed, Save, StepKeys, Taken, Where, a_regex, dotted, one_line, step_kind

SOURCES = ("sink", "stderr", "stdout")
_POLL = 0.05  # seconds between looks while a message is awaited


@dataclass(frozen=True, slots=True)
class Read:
    source: str  # sink | stderr | stdout | file:PATH
    pattern: re.Pattern[str] | None = None
    json_path: str | None = None
    containing: str | None = None
    save: Save = field(default_factory=Save)
    # With servers:, the server whose output it reads (unset: the first).
    server: str | None = None
    # A dotted field of the JSON read that the person reads as text (a chat app shows a webhook's
    # `text`): what they were shown is that field's value, not the whole body as JSON.
    reads: str | None = None
    # The value is the person's credential (a session token, a pairing code): never in the evidence.
    secret: bool = False

    @property
    def kind(self) -> str:
        return "read"

    async def take(self, where: Where) -> Taken:
        wanted = where.filled(self.containing) if self.containing else None
        with anyio.move_on_after(where.timeout):
            while True:
                found = self._newest(where, wanted)
                if found is not None:
                    value, shown, document = found
                    if self.reads is not None and (text := dotted(document, self.reads)) is not None:
                        shown = text
                    shown_value = (
                        f"<secret, {len(value)} characters>" if self.secret else one_line(value)[:SAID]
                    )
                    said = f"read {self._what()}: {shown_value}"
                    saved = self.save.values(value, f"what was read from {self.source}")
                    # A credential read is no question put to the person: nothing of it is kept as shown.
                    return Taken(said, saved, None if self.secret else shown)
                if self.source == "seen":
                    break  # what the agent saw is all there is: nothing more arrives
                await anyio.sleep(_POLL)
        seeking = " or ".join(
            s
            for s in (
                f"field {self.json_path!r}" if self.json_path else "",
                f"/{self.pattern.pattern}/" if self.pattern else "",
            )
            if s
        )
        holding = f" holding {wanted!r}" if wanted else ""
        if self.source == "seen":
            raise HumanFailed(f"nothing {seeking}{holding} is in what the agent's calls returned")
        raise HumanFailed(
            f"nothing {seeking or 'at all'}{holding} reached the person on {self.source} within {where.timeout:g}s"
        )

    def _what(self) -> str:
        how = self.json_path or (self.pattern.pattern if self.pattern else "")
        return f"{self.source} ({how})" if how else self.source

    def _newest(self, where: Where, wanted: str | None) -> tuple[str, str, Any] | None:
        for text, document in reversed(list(self._messages(where))):
            if wanted and wanted not in text:
                continue
            value: str | None = text
            if self.json_path is not None:
                value = dotted(document, self.json_path) if document is not None else None
            if value is not None and self.pattern is not None:
                hit = self.pattern.search(value)
                value = None if hit is None else (hit.group(1) if hit.groups() else hit.group(0))
            if value is not None:
                return value, text, document
        return None

    def _messages(self, where: Where) -> Iterator[tuple[str, Any]]:
        """Each message the person may have received: its text, and its JSON when it is JSON."""
        if self.source == "seen":
            for text in where.seen:
                yield text, _json(text)
            return
        if self.source == "sink":
            if where.sink is None:
                raise HumanFailed(
                    "the person reads the sink, but the run has none: name {sink} in the profile"
                )
            for request in where.sink():
                body = request.get("body")
                text = body if isinstance(body, str) else json.dumps(body, sort_keys=True)
                yield text, body if not isinstance(body, str) else _json(body)
            return
        for path in self._paths(where):
            try:
                text = path.read_text(errors="replace")
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise HumanFailed(f"the person cannot read {self.source}: {exc}") from None
            yield from self._in(text)

    def _in(self, text: str) -> Iterator[tuple[str, Any]]:
        if self.json_path is not None:
            yield text, _json(text)
            return
        # The target's output, a log: a line at a time, so the newest line wins.
        for line in text.splitlines():
            yield line, _json(line)

    def _paths(self, where: Where) -> list[Path]:
        """The files to read, oldest first: the output, a file, or every file a pattern (`*`) matches."""
        if self.source in ("stderr", "stdout"):
            if where.output is None:
                raise HumanFailed(
                    f"the person reads the target's {self.source}, but this target's output is not kept "
                    "(over stdio, stdout is the protocol: read stderr, or serve the target over HTTP)"
                )
            return [where.output]
        relative, root = self.source.removeprefix("file:"), where.root.resolve()
        found = (
            sorted(root.glob(relative), key=_modified)
            if any(c in relative for c in "*?[")
            else [root / relative]
        )
        paths = [p.resolve() for p in found]
        if any(not p.is_relative_to(root) for p in paths):
            raise HumanFailed(f"{self.source} is not under the root")
        return paths


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


class ReadKeys(Keys):
    """Where the person reads, and what they look for there."""

    origin: str = key(
        ...,
        "Where: sink (the bodies the harness's loopback sink received), stderr or stdout (the target's "
        "output; over stdio, stdout is the protocol), or file:PATH (a file under the root; with *, the "
        "newest file it matches).",
        accepts=f"{', '.join(SOURCES[:-1])} or {SOURCES[-1]}, or 'file:PATH' (a relative path under the root)",
        example="stderr",
        alias="from",
    )
    pattern: str | None = key(
        None,
        "A regular expression: its first group, or the whole match, is the value.",
        accepts="a regular expression",
        example="pairing code (\\d{6})",
        min_length=1,
    )
    json_path: str | None = key(
        None,
        "A dotted field of a JSON body or file (with pattern, the pattern is looked for in the field).",
        accepts="a dotted field path",
        example="links.approve",
        alias="json",
        min_length=1,
    )
    containing: str | None = key(
        None,
        "Only what holds this text ({id} filled in): the message about this action.",
        accepts="text",
        example="{id}",
    )
    secret: bool = key(
        False,
        "The value read is the person's credential (a session token, a pairing code): the evidence says it "
        "was read, never what it is.",
        accepts="true or false",
        example=True,
    )
    reads: str | None = key(
        None,
        "A dotted field of the JSON read that the person reads as text, as a chat app shows a webhook's "
        "text: its raw line breaks and bidi controls act there (unset: the whole message, JSON shown as "
        "code, its escapes as escapes).",
        accepts="a dotted field path",
        example="text",
        min_length=1,
    )

    @field_validator("origin")
    @classmethod
    def _a_source(cls, origin: str) -> str:
        if origin in SOURCES:
            return origin
        path = origin.removeprefix("file:")
        if path == origin or not path:
            raise ValueError(f"{origin} is none of {', '.join(SOURCES)} or file:PATH")
        if Path(path).is_absolute() or ".." in Path(path).parts:
            raise ValueError(f"{origin} must name a file under the root (a relative path without '..')")
        return origin

    _pattern = field_validator("pattern")(a_regex)

    @model_validator(mode="after")
    def _says_what(self) -> ReadKeys:
        if self.pattern is None and self.json_path is None:
            raise ValueError(
                "needs pattern: (a regular expression) or json: (a field), to say what the person reads, "
                "e.g. {from: stderr, pattern: 'pairing code (\\d{6})'}"
            )
        return self


@step_kind("read")
class ReadStep(StepKeys):
    """`read:` what the server sent the person, saved for the later steps."""

    read: ReadKeys = key(
        ...,
        "What the person reads: a request at the sink, the target's output, or a file in the root.",
        accepts="a mapping with from, and pattern or json (and containing)",
        example={"from": "sink", "json": "links.approve", "containing": "{id}"},
    )

    @model_validator(mode="after")
    def _saves(self) -> ReadStep:
        if not self.saved().names:
            raise ValueError(
                "saves nothing: add save: NAME, so a later step or the agent's call can use what was read"
            )
        return self

    reaches_server: ClassVar[bool] = True

    def step(self, where: str) -> Read:
        said = self.read
        compiled = re.compile(said.pattern) if said.pattern is not None else None
        return Read(
            said.origin,
            compiled,
            said.json_path,
            said.containing,
            self.saved(),
            reads=said.reads,
            secret=said.secret,
        )
