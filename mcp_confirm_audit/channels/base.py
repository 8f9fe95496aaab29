"""The protocol every channel of the person's speaks: a step, where it is taken, and what it gives back.

A person who approves somewhere else does it in steps: read what the server
sent them (a webhook body, a line on the target's stderr, a file, a terminal
prompt), act on it (run a command, follow a link, answer the prompt, sign a
challenge), and hand what they got (a code, a signature, an evidence id) to
the agent. Each step is a `Step`, one module per kind in this folder,
registered with `@step_kind`; a step's outputs are saved by name (`save:`)
and filled into the later steps and into the agent's confirming call as
`{NAME}`. Nothing here trusts what a step read: it is evidence, and the text
it showed the person is judged like a question (`Taken.shown`).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Protocol, cast
from urllib.parse import quote

from ..errors import UsageError

# What the harness fills in a step: `{id}`, `{challenge}`, `{root}`, a name saved before.
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Evidence, not content: what a step kept of an answer or a file, and the line it is cut to.
KEPT = 4096
SAID = 200


class HumanFailed(Exception):
    """The human's own channel (a command, an HTTP call, a read, a prompt) did not do what it should."""


class Terminal(Protocol):
    """The target's controlling terminal, as the person sitting at it sees it (`terminal.Pty`)."""

    async def expect(self, pattern: re.Pattern[str], timeout: float) -> str:
        """Wait for `pattern` in what the target wrote since the last answer; the text shown up to it."""
        ...

    def answer(self, text: str) -> None:
        """Type `text` and Enter."""
        ...

    def forget(self) -> None:
        """Set aside what it showed so far."""
        ...


@dataclass(frozen=True, slots=True)
class Place:
    """One of several servers (`servers:`) as a step reaches it: its base URL, its output, its terminal."""

    target_url: str | None = None
    output: Path | None = None
    terminal: Terminal | None = None


@dataclass(frozen=True, slots=True)
class Where:
    """What a step is taken with: the root, the bound, the target's base URL, and what it can read."""

    root: Path
    timeout: float
    target_url: str | None = None
    # The names saved so far (`id`, `challenge`, earlier steps' saves): filled in as `{NAME}`.
    values: Mapping[str, str] = field(default_factory=dict)
    # Every request the harness's sink received (oldest first), when the run has a sink.
    sink: Callable[[], list[dict[str, Any]]] | None = None
    # The file the target's stderr (and, when served over HTTP, its stdout) goes to.
    output: Path | None = None
    terminal: Terminal | None = None
    # What the agent's own calls returned: a `read` from `seen` looks only there (the agent's view).
    seen: tuple[str, ...] = ()
    # With `servers:`, each server by name; a step that names one (`server: post`) is taken there.
    servers: Mapping[str, Place] = field(default_factory=dict)

    def with_values(self, more: Mapping[str, str]) -> Where:
        return replace(self, values={**self.values, **more})

    def on(self, server: str | None) -> Where:
        """Where a step that names `server` is taken: that server's URL, output and terminal (None: this)."""
        if server is None:
            return self
        place = self.servers.get(server)
        if place is None:
            known = ", ".join(self.servers) or "none: the target is one server"
            raise HumanFailed(
                f"the step names server {server!r}, which this run did not start (its servers: {known})"
            )
        return replace(self, target_url=place.target_url, output=place.output, terminal=place.terminal)

    def filled(self, text: str) -> str:
        """`text` with every `{NAME}` the step knows put in (`{root}` too); an unknown name stays."""
        known = {"root": str(self.root), **self.values}
        return PLACEHOLDER.sub(lambda m: known.get(m.group(1), m.group(0)), text)

    def filled_url(self, url: str) -> str:
        """`url` with `{url}` the target's base URL and every other value quoted: it adds no path or host."""
        if "{url}" in url:
            if self.target_url is None:
                raise HumanFailed(
                    f"the human's URL {url} names {{url}}, but the target is not served over HTTP: give its full URL"
                )
            url = url.replace("{url}", self.target_url)
        return PLACEHOLDER.sub(
            lambda m: quote(self.values[m.group(1)], safe="") if m.group(1) in self.values else m.group(0),
            url,
        )


@dataclass(frozen=True, slots=True)
class Taken:
    """What one step did: one line of evidence, the values it saved, and the text it showed the person."""

    said: str
    values: Mapping[str, str] = field(default_factory=dict)
    shown: str | None = None
    # Where it was shown: "text" (a body, a card, a line: read as a client would show it) or
    # "terminal" (rendered by a terminal: no markup, but its controls act).
    medium: str = "text"


class Step(Protocol):
    """One thing the person does on their channel."""

    @property
    def kind(self) -> str: ...

    async def take(self, where: Where) -> Taken:
        """Do it; what it did, or HumanFailed with one line."""
        ...


@dataclass(frozen=True, slots=True)
class Save:
    """`save:` of a step: NAME for the step's value, or {NAME: FIELD} for dotted fields of its JSON."""

    whole: str | None = None
    fields: Mapping[str, str] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return ((self.whole,) if self.whole else ()) + tuple(self.fields)

    def values(self, value: str, what: str) -> dict[str, str]:
        """The saved values of a step whose value is `value` (its output, the group a pattern matched)."""
        saved = {self.whole: value} if self.whole else {}
        if self.fields:
            try:
                document = json.loads(value)
            except ValueError:
                raise HumanFailed(
                    f"{what} is not JSON, so {', '.join(self.fields.values())} cannot be read from it: {one_line(value)[:SAID]}"
                ) from None
            for name, path in self.fields.items():
                found = dotted(document, path)
                if found is None:
                    raise HumanFailed(f"{what} has no field {path!r}: {one_line(value)[:SAID]}")
                saved[name] = found
        return saved


def dotted(document: Any, path: str) -> str | None:
    """The value at a dotted path (`links.approve`, `items.0.id`) as text; None if there is none."""
    for part in path.split("."):
        if isinstance(document, Mapping) and part in document:
            document = document[part]
        elif isinstance(document, list) and part.isdigit() and int(part) < len(document):
            document = document[int(part)]
        else:
            return None
    if document is None:
        return None
    return document if isinstance(document, str) else json.dumps(document, sort_keys=True)


def one_line(text: str) -> str:
    return " ".join(text.split())


Fail = Callable[[str], UsageError]
Parser = Callable[[Mapping[str, Any], str, Fail, str], Step]
_KINDS: dict[str, Parser] = {}
# The keys every step may carry besides its kind's own: what it saves, and (with servers:) its server.
COMMON_KEYS = frozenset({"save", "server"})
SERVER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")


def step_kind(name: str) -> Callable[[Parser], Parser]:
    """Register the parser of a step kind: `{NAME: ...}` in a profile's `human:` list is read by it."""

    def register(parser: Parser) -> Parser:
        _KINDS[name] = parser
        return parser

    return register


def server_of(step: Step) -> str | None:
    """The server a step names (`server: post`); None: the first server, or the only one."""
    server = getattr(step, "server", None)
    return server if isinstance(server, str) else None


def kinds() -> tuple[str, ...]:
    _load()
    return tuple(sorted(_KINDS))


def parse_step(raw: Mapping[str, Any], where: str, fail: Fail, source: str) -> Step:
    """One step of a `human:` list: exactly one kind's key (`command`, `http`, `read`, ...), and `save`."""
    _load()
    named = [k for k in raw if k in _KINDS]
    if len(named) != 1:
        said = "names none" if not named else f"names {' and '.join(named)}"
        raise fail(f"{where} must name one kind of step ({', '.join(sorted(_KINDS))}); it {said}")
    step = _KINDS[named[0]](raw, where, fail, source)
    if (server := raw.get("server")) is None:
        return step
    if not isinstance(server, str) or not SERVER_NAME.fullmatch(server):
        raise fail(f"{where}.server must name one of servers: (a short word, e.g. post), got {server!r}")
    if "server" not in {f.name for f in fields(cast(Any, step))}:
        raise fail(
            f"{where}: a {step.kind} step reaches no server of the target; server: names the server an "
            "http, follow, read or terminal step talks to or reads from"
        )
    # The Where the step is taken in is that server's (`Where.on`).
    return cast(Step, replace(cast(Any, step), server=server))


def parse_save(raw: Any, where: str, fail: Fail) -> Save:
    if raw is None:
        return Save()
    if isinstance(raw, str) and _NAME.fullmatch(raw):
        return Save(whole=raw)
    if (
        isinstance(raw, Mapping)
        and raw
        and all(
            isinstance(k, str) and _NAME.fullmatch(k) and isinstance(v, str) and v for k, v in raw.items()
        )
    ):
        return Save(fields=dict(raw))
    raise fail(f"{where}.save must be a NAME or {{NAME: field.path}}, got {raw!r}")


def only_keys(raw: Mapping[str, Any], own: set[str], where: str, fail: Fail) -> None:
    unknown = sorted(set(raw) - own - COMMON_KEYS)
    if unknown:
        raise fail(
            f"{where}: unknown key {unknown[0]!r}; this step takes {', '.join(sorted(own | COMMON_KEYS))}"
        )


def check_names(text: str, known: Sequence[str], where: str, fail: Fail) -> None:
    """Every `{NAME}` in `text` is one the step will know (saved before it, or the harness's own)."""
    unknown = sorted(set(PLACEHOLDER.findall(text)) - set(known))
    if unknown:
        raise fail(
            f"{where} names {{{unknown[0]}}}, which no step before it saves; known: {', '.join('{' + k + '}' for k in known)}"
        )


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _load() -> None:
    """Import every module of this folder once, so each kind registers itself; no list of them is kept."""
    package = __name__.rpartition(".")[0]
    for info in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if info.name not in _NOT_KINDS:
            importlib.import_module(f"{package}.{info.name}")


# The modules here that define no kind of step.
_NOT_KINDS = frozenset({"base", "human", "pty_host"})


async def take_all(
    steps: Sequence[Step], where: Where, on_taken: Callable[[Taken], None] | None = None
) -> tuple[dict[str, str], list[Taken]]:
    """Take `steps` in order, each seeing the values saved before it; what all of them saved.

    `on_taken` hears of each step as it is done, so what a step showed is kept even when the
    steps after it are cut short (a call that waited is over, and the person with it).
    """
    saved: dict[str, str] = {}
    taken: list[Taken] = []
    for step in steps:
        done = await step.take(where.with_values(saved).on(server_of(step)))
        saved.update(done.values)
        taken.append(done)
        if on_taken is not None:
            on_taken(done)
    return saved, taken
