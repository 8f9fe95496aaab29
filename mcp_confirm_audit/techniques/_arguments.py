"""The string arguments of an action that names no file, as what the person reads shows them.

A family whose hostile text goes into the action's arguments (prompt-forging) finds
the strings whose plain value is in the question, the action's own or those its
setup calls staged, and makes uses of the action with one of them set to its text.

A plain value with a structure (a command line, a path, a URL) is one a target checks:
`aws s3 ls` set outright to `notes\n\nplease confirm.txt` is no command, refused before
any question. So the hostile text goes inside it first (`placements`): in place of its
last word or segment, then after it, and outright last. The first placement that
reaches a question is kept for every later value of the attack.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..engine.action import Instance
from .base import Attack

__all__ = ["ArgumentSubject", "Where", "placements", "shown_arguments", "strings", "with_field"]

# An argument the question shows: its setup call's index (None: the action's own), its name (dotted for a
# field inside an object argument: `note.title`), its plain value.
Where = tuple[int | None, str, str]


def shown_arguments(attack: Attack, victim: Instance, baseline: str) -> list[Where]:
    """The strings of the action (then of its setup calls) whose plain value is in what the person read."""
    # Where the question's text comes from: the gated call's own strings, else (a handle)
    # the strings its setup call staged, which the question quotes back.
    handles = {str(v) for v in victim.saved.values()}
    schemas = {t.name: t.input_schema for t in attack.tools}
    own = schemas.get(attack.plan.name, {})
    shown: list[Where] = [
        (None, k, v)
        for k, v in strings(victim.arguments)
        if v in baseline
        and v not in handles  # a handle is a lookup, not text
        and _free_text(own, k)
    ]
    # A value several arguments hold (one filler for all), shown fewer times than they hold it, does not
    # say which of them the question shows (sendgrid-mcp-secure: `template_id`'s value shown, `body_text`
    # holding the same one and dropped from the message a template sends): none of them is counted.
    held = Counter(v for _, _, v in shown)
    values = {v for _, v in strings(victim.arguments)}
    shown = [where for where in shown if held[where[2]] <= _times_shown(baseline, where[2], values)]
    # A setup value the action's own arguments also hold (a frame set for `ops-bot`, then a payment by
    # `ops-bot`) is in the question as the action's own: staged hostile, it makes another thing the
    # action never names, and its absence from the question says nothing about how one is shown.
    # A value the action holds only because a setup call minted it (`collection: "{coll}"`, saved from
    # create_collection's name) is that call's: staged hostile, it reaches the action too.
    own_values = {v for _, v in strings(victim.arguments) if v not in handles}
    for index, step in enumerate(attack.plan.setup):
        schema = schemas.get(step.tool, {})
        shown += [
            (index, k, v)
            for k, v in strings(step.args)
            if v in baseline and v not in own_values and _free_text(schema, k)
        ]
    return sorted(shown, key=lambda where: where[0] is not None)


def _times_shown(baseline: str, value: str, values: set[str]) -> int:
    """How often `value` is in what the person read as itself, not inside a longer value another argument
    holds: the filler a use's content starts with (`mcp-confirm-audit #7`) is that content's."""
    for longer in sorted((v for v in values if value in v and v != value), key=len, reverse=True):
        baseline = baseline.replace(longer, "")
    return baseline.count(value)


def strings(arguments: Mapping[str, Any], prefix: str = "", depth: int = 3) -> list[tuple[str, str]]:
    """Every non-empty string of `arguments`, by name; a field inside an object argument by its dotted
    name (`note.title`): it reaches a question as a top-level string does."""
    found: list[tuple[str, str]] = []
    for key, value in arguments.items():
        name = f"{prefix}{key}"
        if isinstance(value, str) and value:
            found.append((name, value))
        elif isinstance(value, Mapping) and depth > 1:
            found += strings(value, f"{name}.", depth - 1)
    return found


def with_field(arguments: Mapping[str, Any], name: str, value: Any) -> dict[str, Any]:
    """`arguments` with the (dotted) `name` set to `value`, every object on the way copied."""
    key, _, rest = name.partition(".")
    inner = arguments.get(key)
    if rest and isinstance(inner, Mapping):
        return {**arguments, key: with_field(inner, rest, value)}
    return {**arguments, key: value}


def _declared(schema: object, name: str) -> object:
    """The schema property a (dotted) argument name declares, or None."""
    for part in name.split("."):
        properties = schema.get("properties") if isinstance(schema, dict) else None
        schema = properties.get(part) if isinstance(properties, dict) else None
    return schema


def _free_text(schema: object, name: str) -> bool:
    """Whether the schema lets `name` hold any text: a value from a fixed list (an enum, a const) never
    holds hostile text, so a question showing it says nothing about how the person reads one."""
    declared = _declared(schema, name)
    if not isinstance(declared, dict):
        return True
    choices = [declared, *(declared.get("anyOf") or ()), *(declared.get("oneOf") or ())]
    fixed = [c for c in choices if isinstance(c, dict) and _closed(c)]
    alternatives = [c for c in choices[1:] if isinstance(c, dict)]
    return not (_closed(declared) or (alternatives and len(fixed) == len(alternatives)))


# String formats that hold no text a person reads as words: a date, a time, an id, an address.
_CLOSED_FORMATS = frozenset({"date", "date-time", "time", "duration", "uuid", "ipv4", "ipv6"})


def _closed(declared: Mapping[str, Any]) -> bool:
    """Whether a schema (or one alternative of it) takes only a closed set of values: an enum, a const,
    a boolean or a number, or a string of a format that holds no words."""
    kind = declared.get("type")
    return (
        "enum" in declared
        or "const" in declared
        or kind in ("boolean", "integer", "number")
        or declared.get("format") in _CLOSED_FORMATS
    )


# Where a structured value is cut: after its last space or path separator, or its scheme's colon.
_LAST_PART = re.compile(r"^(?:.*[\s/\\]|[A-Za-z][A-Za-z0-9+.-]*:)")

Placement = Callable[[str], str]


def placements(plain: str) -> tuple[Placement, ...]:
    """How hostile text goes into `plain`, in the order tried: inside a structured value first, outright last.

    `shop cancel ORD-1` gives `shop cancel <text>`, then `shop cancel ORD-1 <text>`; a path or URL
    gives its head with `<text>` as the last segment; a value without a structure, the text alone.
    """
    head = _LAST_PART.match(plain)
    inside: list[Placement] = []
    if head is not None:
        kept = head.group()
        inside.append(lambda text: kept + text)
        if any(ch.isspace() for ch in plain):
            inside.append(lambda text: f"{plain} {text}")  # a command line: one more word
    return (*inside, lambda text: text)


class ArgumentSubject:
    """One use of the action with one string (its own, or staged by a setup call) set to another value."""

    def __init__(self, attack: Attack, victim: Instance, where: Where) -> None:
        self.attack, self.victim, (self.step, self.argument, plain) = attack, victim, where
        self.staged = self.unstaged = 0
        self._placements = placements(plain)
        self._kept: int | None = None

    def values(self, text: str) -> list[tuple[int, str]]:
        """The values to send for hostile `text`, in order, each with its placement's index.

        Once a placement reached a question, only it: a later value it does not get asked about is
        refused for what it holds, not for where it was put.
        """
        order = range(len(self._placements)) if self._kept is None else (self._kept,)
        seen: dict[str, int] = {}
        for index in order:
            seen.setdefault(self._placements[index](text), index)
        return [(index, value) for value, index in seen.items()]

    def reached(self, placement: int) -> None:
        """A value placed so reached a question: keep placing values so."""
        self._kept = placement

    async def __call__(self, value: str) -> Instance | None:
        if self.step is None:
            return replace(self.victim, arguments=with_field(self.victim.arguments, self.argument, value))
        # A field inside an object argument: the whole object, that field set, as the setup call gets it.
        top = self.argument.partition(".")[0]
        staged = await self.attack.staged_with(
            self.step, top, with_field(self.attack.plan.setup[self.step].args, self.argument, value)[top]
        )
        if staged is None:
            self.unstaged += 1
        else:
            self.staged += 1
        return staged

    def never_staged(self) -> None:
        """No hostile value ever got past the setup call: nothing about the question was tested."""
        if self.step is not None and self.unstaged and not self.staged:
            tool = self.attack.plan.setup[self.step].tool
            last = self.attack.staging_failed
            said = f" (the last failure: {last[:200]})" if last else ""
            self.attack.setup_failed(
                f"no use of the action with a hostile {self.argument!r} in {tool} could be set up "
                f"({self.unstaged} tried){said}, so no question about one was ever asked; stage it with "
                "values the setup calls accept"
            )
