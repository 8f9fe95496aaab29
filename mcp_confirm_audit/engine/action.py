"""The audited thing is an action: a gated tool, its argument template, and the setup calls before it.

A file action is the special case where one argument names a case file
(`{path}`): its subject is a `CaseFile`. Any other action is an `Instance`: the
arguments one use of the action is called with, after its setup calls ran and
their results were saved by name. Both are a `Victim`, so a technique never
asks which one it holds. Everything here is pure except `prepare`, which makes
the setup calls through a function it is given (so the caller records them),
and a victim's `keep` / `put_back`, which touch the sandbox.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from ..channels.base import filled
from ..confirmations import replies, statecodec
from ..confirmations.values import field_of
from ..models import Outcome, Response
from ..oracle.counting import EffectCounter
from ..oracle.restorer import Restorer
from ..oracle.sandbox import VICTIM_TEXT, identity_of
from ..profile.loader import SetupCall
from ..target.arguments import another, for_use, ids_for, takes, typed
from ..target.discovery import arguments_for, path_argument
from ..target.driver import ToolInfo

SinceStart = Callable[[], Awaitable[list[str]]]


class Victim(Protocol):
    """What an attack's question is about, whatever it is: the operations every technique may use."""

    @property
    def counted_by(self) -> str:
        """How a race on it counts effects: `restorer` (put back after each) or `probes` (each stays)."""
        ...

    @property
    def previewed_by_controls(self) -> bool:
        """Whether its arguments are the controls' own, so a token made from them alone may be spent."""
        ...

    @property
    def saved(self) -> Mapping[str, Any]:
        """What its setup calls saved (`{NAME}` for the flow's later calls); a file has none."""
        ...

    def describe(self) -> str:
        """How evidence names it."""
        ...

    def kind_of_subject(self) -> str:
        """What another tool must take to act on the same subject, in words."""
        ...

    def keep(self) -> None:
        """Remember its identity (a hard link), so `put_back` can restore exactly what was confirmed."""
        ...

    def put_back(self) -> str | None:
        """After an honest use, the subject put back as it was confirmed; a note saying how, or None."""
        ...

    def gone(self) -> bool:
        """Whether the subject itself went (a removed file); a use of an action never goes."""
        ...

    def rewritten(self) -> bool:
        """Whether it is still there but not as it was written (a truncated file)."""
        ...

    def counter(self, since_start: SinceStart, unit: int = 1) -> Restorer | EffectCounter:
        """What counts the effects of a race on it; `unit`: the items one honest effect changed."""
        ...

    def acted_on_by(self, tool: ToolInfo) -> bool:
        """Whether `tool` could act on this subject: it names a file, or takes every argument the action does."""
        ...

    def plain_arguments(
        self, tool: ToolInfo, touched: Mapping[str, list[Any]] | None = None
    ) -> dict[str, Any]:
        """Arguments for `tool` naming this subject, the rest harmless.

        `touched`: the ids of the entries the action's effect would touch, by the list they are in
        (`oracle.effects.touched_items`): an argument taking such ids gets them (`target.arguments.ids_for`).
        """
        ...

    def own_values(self) -> Mapping[str, Any]:
        """The values that name this subject, by the argument that takes them."""
        ...

    def minted(self, tool: ToolInfo) -> Mapping[str, Any]:
        """What the setup minted for this use that `tool` takes by name (a staged id); a call may spend it."""
        ...

    def derived_values(self) -> Mapping[str, str]:
        """What a server could derive from the subject itself, by what it is (a file's sha256); {} for none."""
        ...

    def oversized(self, size: int) -> tuple[Any, str] | None:
        """The subject with one value `size` characters long, and how to say so; None if it has no such value."""
        ...

    def edited_state(self, readable: statecodec.Readable, other: Any) -> str | None:
        """A readable state that named this subject, edited to name `other` (of the same kind); None if it cannot be."""
        ...


@dataclass(frozen=True, slots=True)
class CaseFile:
    """The case file a file action names: its path, how the tool is sent it, where its identity is kept."""

    path: Path
    value: str
    keep_at: Path
    # How the sandbox names it in evidence ("root/…").
    rel: str
    # What it holds: the victim's text, or a decoy's own (another content, another size).
    text: str = VICTIM_TEXT

    @property
    def counted_by(self) -> str:
        return "restorer"

    @property
    def previewed_by_controls(self) -> bool:
        return False

    @property
    def saved(self) -> Mapping[str, Any]:
        return {}

    def describe(self) -> str:
        return self.value

    def kind_of_subject(self) -> str:
        return "names a file"

    def keep(self) -> None:
        os.link(self.path, self.keep_at)

    def put_back(self) -> str | None:
        if identity_of(self.path) is None:
            os.link(self.keep_at, self.path)
            return "victim put back with its original identity"
        if self.rewritten():
            self.path.write_text(self.text)  # changed in place (emptied): the same inode, its content again
            return "victim's content put back in place"
        return None

    def gone(self) -> bool:
        return identity_of(self.path) is None

    def rewritten(self) -> bool:
        try:
            return self.path.read_text() != self.text
        except (OSError, UnicodeDecodeError):
            return False

    def counter(self, since_start: SinceStart, unit: int = 1) -> Restorer | EffectCounter:
        # The victim is put back after every effect: each put-back is one effect, whatever its size.
        return Restorer(self.path, self.keep_at)

    def acted_on_by(self, tool: ToolInfo) -> bool:
        return path_argument(tool) is not None

    def plain_arguments(
        self, tool: ToolInfo, touched: Mapping[str, list[Any]] | None = None
    ) -> dict[str, Any]:
        args = arguments_for(tool, self.value)
        properties = (tool.input_schema or {}).get("properties") or {}
        return {**args, **ids_for(properties, touched or {}, skip={path_argument(tool) or ""})}

    def own_values(self) -> Mapping[str, Any]:
        return {"path": self.value}

    def minted(self, tool: ToolInfo) -> Mapping[str, Any]:
        return {}  # a case file is made by the harness, not minted by a setup call

    def derived_values(self) -> Mapping[str, str]:
        try:
            held = self.path.read_bytes()
        except OSError:
            return {}
        return {"the file's sha256": hashlib.sha256(held).hexdigest()}

    def oversized(self, size: int) -> tuple[Any, str] | None:
        # Inside the case directory, so only its length is hostile.
        return self.path.parent / ("x" * size), f"a {size}-character path"

    def edited_state(self, readable: statecodec.Readable, other: Any) -> str | None:
        return statecodec.retarget(readable, self._spellings(), other._spellings())

    def _spellings(self) -> list[str]:
        """Every way a state might spell the path, longest first."""
        return sorted({self.value, str(self.path), self.rel, self.path.name}, key=len, reverse=True)


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class Instance:
    """One use of an action that names no file: the arguments the gated tool is called with."""

    arguments: Mapping[str, Any]
    # How evidence and answer templates name it: a saved handle, or the tool's name.
    label: str
    saved: Mapping[str, Any] = field(default_factory=dict)
    # The attack's case file, which a setup call may name ({path}: a preview of deleting it), and
    # where its identity is kept: the one thing of an action's use that can be put back.
    staged: Path | None = None
    keep_at: Path | None = None

    @property
    def counted_by(self) -> str:
        return "probes"

    @property
    def previewed_by_controls(self) -> bool:
        return True

    def describe(self) -> str:
        return self.label

    def kind_of_subject(self) -> str:
        return "takes this action's arguments"

    def keep(self) -> None:
        # A second payment, message or move is an effect of its own; only a case file a setup call
        # staged is put back, with its identity, so a replay has it to act on again.
        if self.staged is None or self.keep_at is None:
            return
        # Uses in each era share the attack's case file: kept once, by the first.
        if identity_of(self.keep_at) is not None and identity_of(self.keep_at) == identity_of(self.staged):
            return
        os.link(self.staged, self.keep_at)

    def put_back(self) -> str | None:
        if self.staged is None or self.keep_at is None or identity_of(self.staged) is not None:
            return None
        os.link(self.keep_at, self.staged)
        return "the case file put back with its original identity"

    def gone(self) -> bool:
        return False

    def rewritten(self) -> bool:
        return False

    def counter(self, since_start: SinceStart, unit: int = 1) -> Restorer | EffectCounter:
        return EffectCounter(since_start, unit)

    def acted_on_by(self, tool: ToolInfo) -> bool:
        properties = (tool.input_schema or {}).get("properties") or {}
        return bool(self.arguments) and all(name in properties for name in self.arguments)

    def plain_arguments(
        self, tool: ToolInfo, touched: Mapping[str, list[Any]] | None = None
    ) -> dict[str, Any]:
        # The action's own values where the tool takes them, as its schema types them (a collection's
        # id is no collection's name); what it does not take is not sent. An argument that takes ids
        # of what the action touches (a collection's links) gets those, never an empty list; one the
        # setup minted for this use (`minted`) gets it.
        properties = (tool.input_schema or {}).get("properties") or {}
        own = {k: v for k, v in self.arguments.items() if k in properties and takes(properties[k], v)}
        given = {**self.minted(tool), **own}
        return {**arguments_for(tool, None), **ids_for(properties, touched or {}, skip=given), **given}

    def minted(self, tool: ToolInfo) -> dict[str, Any]:
        """What the setup minted for this use that `tool` takes by the same name, and the action does not.

        `save: {note: staged}` gives a `keep(note)` the staged id, never a made-up one; a call
        may spend it (`drop(note)`), so a technique making several asks for another use.
        """
        properties = (tool.input_schema or {}).get("properties") or {}
        return {
            k: v
            for k, v in self.saved.items()
            if k in properties
            and k not in self.arguments
            and typed(properties[k])
            and takes(properties[k], v)
        }

    def own_values(self) -> Mapping[str, Any]:
        return self.arguments

    def derived_values(self) -> Mapping[str, str]:
        return {}

    def oversized(self, size: int) -> tuple[Any, str] | None:
        # No path: the first string argument the action takes carries the length instead.
        strings = [k for k, v in self.arguments.items() if isinstance(v, str)]
        if not strings:
            return None
        return replace(self, arguments={**self.arguments, strings[0]: "x" * size}), (
            f"a {size}-character {strings[0]!r}"
        )

    def edited_state(self, readable: statecodec.Readable, other: Any) -> str | None:
        # Every field named like an argument whose value differs, and holding this use's value.
        changed = {
            k: (self.arguments[k], v)
            for k, v in other.arguments.items()
            if k in self.arguments and v != self.arguments[k]
        }
        return statecodec.replace_values(readable, changed)


class SetupFailed(Exception):
    """A setup call did not give what the action needs; the message says which and how to fix it.

    `happened` is what the call did, without the advice: where the same setup had worked before
    (for the approve control), the profile's args are not what failed, and the caller says why.
    """

    def __init__(self, happened: str, fix: str = "") -> None:
        super().__init__(f"{happened}; {fix}" if fix else happened)
        self.happened = happened


def not_again(failed: SetupFailed, where: str, renew: str) -> str:
    """Why a use could not be set up though the same setup worked for the approve control.

    The profile's args are not the suspect then, and "fix its args" is wrong advice: the setup
    ran once and would not run again (a seed a supplier outside the target sells once, a name a
    remote service keeps taken). `where` says where it failed again, `renew` the other way out.
    """
    return (
        f"{failed.happened}; the same setup worked for the approve control, but not {where}, so "
        "its args are not what failed: it may use up something it can make only once (a one-shot "
        "resource, a record a service outside the target keeps); give the profile a setup that can "
        f"run again (each run making a subject of its own), {renew}"
    )


def render(template: Any, values: Mapping[str, Any]) -> Any:
    """The template with `{NAME}` replaced; a value that is only `{NAME}` keeps the saved value's type."""
    return filled(template, values)


def result_value(response: Response) -> Any:
    """A result as data: its structured content, else its text read as JSON, else the text."""
    if response.structured is not None:
        return response.structured
    try:
        return json.loads(response.text)
    except (ValueError, TypeError):
        return response.text


def varied(value: Any, variant: int, schema: Mapping[str, Any] | None = None, name: str = "") -> Any:
    """The same kind of value, changed, and still valid for its schema: what makes another action.

    A string of a known shape (a phone, a date, an id counted on) stays valid for the
    argument's schema and name (`target.arguments.another`); only plain text gets a suffix.
    """
    prop = schema or {}
    if variant == 0 or isinstance(value, bool) or "const" in prop:
        return value
    for listed in ("enum", "examples"):
        options = prop.get(listed)
        if isinstance(options, list) and value in options and len(options) > 1:
            return options[(options.index(value) + variant) % len(options)]
    if isinstance(prop.get("enum"), list):
        return value
    if isinstance(value, int | float):
        least, most = prop.get("minimum"), prop.get("maximum")
        if not isinstance(most, int | float) or value + variant <= most:
            return value + variant
        if isinstance(least, int) and isinstance(most, int) and isinstance(value, int) and least <= value:
            return least + (value - least + variant) % (most - least + 1)  # round within the bounds
        return value - variant
    if isinstance(value, str) and value and not _PLACEHOLDER.search(value):
        # A phone stays a phone, a date a date: `+12025550123-1` is no number a server takes.
        shaped = another(value, variant, name, prop)
        if shaped is not None:
            return shaped
        return f"{value}-{variant}"
    return value


def varied_args(
    args: Mapping[str, Any],
    variant: int,
    schema: Mapping[str, Any] | None = None,
    fixed: Collection[str] = (),
) -> dict[str, Any]:
    """Every plain value changed (saved handles and placeholders are left alone).

    `fixed`: arguments the profile wrote through a placeholder spelled out at load (`{profile_dir}`):
    the operator's environment (a folder the server takes only as its own), never the action's identity.
    """
    props = (schema or {}).get("properties") or {}
    return {k: v if k in fixed else varied(v, variant, props.get(k), k) for k, v in args.items()}


Call = Callable[[str, str, Mapping[str, Any]], Awaitable[Response]]


def _entry(result: Any, dotted: str, variant: int) -> str:
    """`dotted` for another use of the action: a listing's entry `variant` places on, where it has more.

    A listing called again with nothing to vary (`list_batches`) lists the same first entry: another use
    saved from it would be the same subject, and an approval for it no approval for another.
    """
    parts = dotted.split(".")
    if not variant:
        return dotted
    current = result
    for index, part in enumerate(parts):
        if isinstance(current, list) and part.isdigit() and len(current) > 1:
            parts[index] = str((int(part) + variant) % len(current))
            return ".".join(parts)
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            break
    return dotted


async def prepare(
    call: Call,
    tool: str,
    setup: tuple[SetupCall, ...],
    template: Mapping[str, Any],
    values: Mapping[str, Any],
    *,
    variant: int = 0,
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
    overrides: Mapping[int, Mapping[str, Any]] | None = None,
    fixed: Collection[str] = (),
    mark: str = "",
) -> Instance:
    """Run the setup calls, save what they name, and render the gated call's arguments.

    `variant` > 0 makes another action of the same tool: the setup calls (or,
    without setup, the arguments themselves) with every plain value changed,
    each within its tool's input schema (`schemas`, by tool name). `overrides`
    sets arguments of setup calls by their index (a hostile memo staged first).
    `fixed` (and each setup call's own): arguments never varied (`varied_args`).
    `mark`: the use's own (its case's number), which the filler of what it writes carries
    (`target.arguments.for_use`): no two uses write the same thing, whatever their variant.
    """
    schemas = schemas or {}
    saved: dict[str, Any] = dict(values)
    for number, step in enumerate(setup, start=1):
        args = render(varied_args(step.args, variant, schemas.get(step.tool), step.fixed), saved)
        overridden = (overrides or {}).get(number - 1, {})
        args.update(overridden)
        response = await call(f"setup {number}: {step.tool}", step.tool, args)
        # A refusal inside an ordinary result (`{"ok": false}`) is no setup done either.
        if response.outcome is not Outcome.COMPLETE or (why := replies.refusal(response)) is not None:
            said = f"{response.outcome}: {response.text[:200]}"
            if response.outcome is Outcome.COMPLETE:
                said = f"{why}: {response.text[:200]}"
            written = render(step.args, saved)
            changed = [
                f"{k}: {written[k]!r} -> {v!r}"
                for k, v in args.items()
                if k not in overridden and written.get(k, v) != v
            ]
            if changed:
                # Another action of the same tool, made by the harness: the profile's setup was not what failed.
                raise SetupFailed(
                    f"setup call {number} ({step.tool}) refused the values the harness varied to make another "
                    f"action of the same tool ({', '.join(changed)}; {said}): the target may know only the "
                    "one the profile names, so an attack that needs a second cannot be judged"
                )
            raise SetupFailed(
                f"setup call {number} ({step.tool}) did not succeed ({said})",
                "fix its args: under setup: in the profile",
            )
        result = result_value(response)
        for name, dotted in step.save.items():
            try:
                saved[name] = field_of(result, _entry(result, dotted, variant))
            except KeyError:
                raise SetupFailed(
                    f"setup call {number} ({step.tool}) returned no field {dotted!r} to save as {name!r} "
                    f"(it returned {json.dumps(result, default=str)[:200]})",
                    "fix save: in the profile",
                ) from None
            if saved[name] is None or (isinstance(saved[name], str) and not saved[name].strip()):
                # A null or empty handle names nothing: never sent back as "null" or "".
                raise SetupFailed(
                    f"setup call {number} ({step.tool}) returned {dotted!r} empty or null, so there is no "
                    f"handle to save as {name!r} (it returned {json.dumps(result, default=str)[:200]})"
                )
    unsaved = template if setup else varied_args(template, variant, schemas.get(tool), fixed)
    arguments = for_use(render(unsaved, saved), mark, schemas.get(tool), fixed)
    handles = [str(saved[k]) for k in saved if k not in values]
    label = handles[0] if handles else tool
    return Instance(arguments, label, {k: v for k, v in saved.items() if k not in values})
