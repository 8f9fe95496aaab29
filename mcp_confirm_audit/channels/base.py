"""The protocol every channel of the person's speaks: a step, where it is taken, and what it gives back.

A person who approves somewhere else does it in steps: read what the server
sent them (a webhook body, a line on the target's stderr, a file, a terminal
prompt), act on it (run a command, follow a link, answer the prompt, sign a
challenge), and hand what they got (a code, a signature, an evidence id) to
the agent. Each step is a `Step`, one module per kind in this folder; its
keys are a `StepKeys` model there, registered with `@step_kind`, which the
profile is validated with and which builds the step. A step's outputs are saved by name (`save:`)
and filled into the later steps and into the agent's confirming call as
`{NAME}`. Nothing here trusts what a step read: it is evidence, and the text
it showed the person is judged like a question (`Taken.shown`).
"""

from __future__ import annotations

import difflib
import functools
import importlib
import json
import operator
import pkgutil
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, ClassVar, Protocol, TypeVar, cast
from urllib.parse import quote

from pydantic import Discriminator, Field, Tag, model_validator

from ..profile.contract import Keys, flow, key

# What the harness fills in a step: `{id}`, `{challenge}`, `{root}`, a name saved before.
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def filled(template: Any, values: Mapping[str, Any]) -> Any:
    """`{NAME}` replaced throughout; a string that is only `{NAME}` keeps the value's type (a number stays one)."""
    if isinstance(template, str):
        whole = PLACEHOLDER.fullmatch(template)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)
    if isinstance(template, Mapping):
        return {k: filled(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [filled(v, values) for v in template]
    return template


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

    async def type_ahead(self, text: str, timeout: float) -> None:
        """Type `text` and Enter with no question shown: back once it waits, unread, in the input."""
        ...

    def discard_unread(self) -> int:
        """Throw away what was typed and never read; how many bytes it was."""
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
    # What the harness changes after the person has read the question and before they answer (a swap
    # family's change of the file they were shown): done once, by the step that answers.
    before_answer: Callable[[], Awaitable[None]] | None = None

    async def reading_done(self) -> None:
        """The person read the question and is about to answer: the harness's change, if any, now."""
        if self.before_answer is not None:
            await self.before_answer()

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
        """`text` with every `{NAME}` the step knows put in (`{root}`, `{url}` too); an unknown name stays."""
        url = {"url": self.target_url} if self.target_url is not None else {}
        known = {"root": str(self.root), **url, **self.values}
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


# -- a step as the profile says it: one model per kind, each in its kind's module -----------

SAVE_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
SERVER_NAME = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"
# A list entry that is only a string is a command line.
LINE = "line"
# Keys of a step whose text is a pattern to match, or read from the environment: never filled.
NOT_FILLED = ("pattern", "expect", "headers")


def _save_form(value: Any) -> str:
    return "name" if isinstance(value, str) else "fields"


class StepKeys(Keys):
    """What every step carries beside its own kind's key: `save`, the names of what it gives.

    A kind of step is a subclass in its own module, registered with `@step_kind`; its one
    required key is the kind's name (`read:`, `command:`), and `step()` builds the Step.
    """

    kind: ClassVar[str] = ""
    # Whether the step talks to or reads from a server of the target (so it may name one: `server:`).
    reaches_server: ClassVar[bool] = False

    save: (
        Annotated[
            Annotated[Annotated[str, Field(pattern=SAVE_NAME)], Tag("name")]
            | Annotated[
                dict[Annotated[str, Field(pattern=SAVE_NAME)], Annotated[str, Field(min_length=1)]],
                Field(min_length=1),
                Tag("fields"),
            ],
            Discriminator(_save_form),
        ]
        | None
    ) = key(
        None,
        "What the step gives, kept for later steps and the agent's call as {NAME}: NAME for its whole "
        "value (what a command printed, what a read found), or {NAME: field.path} for fields of its JSON.",
        accepts="a NAME or {NAME: field.path}",
        example={"evidence": "evidence_ref"},
    )

    server: str | None = key(
        None,
        "With servers:, the server an http, follow, read or terminal step talks to or reads from: whose "
        "base URL {url} is, whose output a read reads, whose terminal it answers (unset: the first server).",
        accepts="the name of one of servers:",
        example="post",
        pattern=SERVER_NAME,
    )

    @model_validator(mode="after")
    def _reaches_its_server(self) -> StepKeys:
        if self.server is not None and not self.reaches_server:
            raise ValueError(
                f"a {self.kind} step reaches no server of the target (it runs on this machine); server: "
                "names the server an http, follow, read or terminal step talks to or reads from"
            )
        return self

    def saved(self) -> Save:
        if self.save is None:
            return Save()
        if isinstance(self.save, str):
            return Save(whole=self.save)
        return Save(fields=dict(self.save))

    def templates(self) -> str:
        """The text of the step the harness fills in: not its patterns, its headers (`${ENV}`) or its saves."""
        said = self.model_dump(by_alias=True, exclude_unset=True, exclude={"save", "server"})
        kept = {
            name: {k: v for k, v in value.items() if k not in NOT_FILLED}
            if isinstance(value, Mapping)
            else value
            for name, value in said.items()
        }
        return json.dumps(kept, default=str)

    def step(self, where: str) -> Step:
        """The step these keys describe; `where` names it in a line about a value read as it is built."""
        raise NotImplementedError

    def built(self, where: str) -> Step:
        """`step()`, taken on the server the keys name (its dataclass has a `server` field: `Where.on`)."""
        step = self.step(where)
        if self.server is None:
            return step
        return cast(Step, replace(cast(Any, step), server=self.server))


_KINDS: dict[str, type[StepKeys]] = {}
_K = TypeVar("_K", bound=type[StepKeys])


def step_kind(name: str) -> Callable[[_K], _K]:
    """Register the keys of a step kind: `{NAME: ...}` in a profile's `human:` list is read by them."""

    def register(model: _K) -> _K:
        model.kind = name
        _KINDS[name] = model
        return model

    return register


def server_of(step: Step) -> str | None:
    """The server a step names (`server: post`); None: the first server, or the only one."""
    server = getattr(step, "server", None)
    return server if isinstance(server, str) else None


def kinds() -> tuple[str, ...]:
    _load()
    return tuple(sorted(_KINDS))


class _StepForm:
    """A pydantic discriminator: the kind a step names (its one kind's key); a string is a command line."""

    __name__ = "step_form"  # what pydantic calls it

    def __call__(self, value: Any) -> str | None:
        if isinstance(value, str):
            return LINE
        if isinstance(value, StepKeys):  # serialising
            return value.kind
        if isinstance(value, Mapping):
            named = [k for k in value if k in _KINDS]
            return named[0] if len(named) == 1 else None
        return None

    def refusal(self, value: Any) -> str:
        """Why `value` is no step (read by `contract.one_line`)."""
        example = (
            "e.g. {command: 'approve-cli {id}'} or {read: {from: stderr, pattern: 'code (\\d+)'}, save: code}"
        )
        if not isinstance(value, Mapping):
            return f"must be a step, a mapping such as {{command: ...}} or {{read: ...}}, got {flow(value)}; {example}"
        named = [str(k) for k in value if k in _KINDS]
        said = "names none" if not named else f"names {' and '.join(named)}"
        if not named:
            # A kind's key misspelt: the nearest kind, as for any unknown key.
            for other in (str(k) for k in value if k not in StepKeys.model_fields):
                if close := difflib.get_close_matches(other, _KINDS, n=1, cutoff=0.6):
                    said += f" (unknown key {other!r}; did you mean {close[0]!r}?)"
                    break
        return f"must name one kind of step ({', '.join(sorted(_KINDS))}); it {said}; {example}"


def step_union() -> Any:
    """The type of one step of a `human:` list: every registered kind, chosen by the key it names."""
    _load()
    forms: list[Any] = [Annotated[model, Tag(name)] for name, model in sorted(_KINDS.items())]
    forms.append(Annotated[str, Field(pattern=r"\S"), Tag(LINE)])
    return Annotated[functools.reduce(operator.or_, forms), Discriminator(_StepForm())]


def a_regex(pattern: str | None) -> str | None:
    """`pattern` if it is a regular expression (a validator of a step's pattern key)."""
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return pattern


def names_problem(text: str, known: Sequence[str]) -> str | None:
    """Why `text` names a `{NAME}` the step will not know (saved before it, or the harness's own); None if none."""
    unknown = sorted(set(PLACEHOLDER.findall(text)) - set(known))
    if not unknown:
        return None
    return f"names {{{unknown[0]}}}, which no step before it saves; known: {', '.join('{' + k + '}' for k in known)}"


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
    credentials: set[str] = set()
    for step in steps:
        answering = not (step.kind == "read" or getattr(step, "shows", False))
        if answering and where.before_answer is not None and not getattr(step, "reads_then_answers", False):
            # Everything the person reads came before this step: its answer is what follows the change.
            await where.reading_done()
        done = await step.take(where.with_values(saved).on(server_of(step)))
        if answering:
            where = replace(where, before_answer=None)
        if getattr(step, "secret", False):
            credentials.update(v for v in done.values.values() if v)
        for value in credentials:
            # A credential read by an earlier step is never in a later step's line (a URL it went into).
            done = replace(done, said=done.said.replace(value, "<secret>"))
        saved.update(done.values)
        taken.append(done)
        if on_taken is not None:
            on_taken(done)
    return saved, taken
