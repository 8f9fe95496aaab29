"""How the verdict reads a family's own evidence: a transcript's parts, each with its registered reading.

A family that records evidence of its own (a race's redemptions, the person's accepts, what a
question showed) records it as a part: a small frozen dataclass deriving from `models.Part`,
put on the transcript with `Attack.record(part)`. Beside it, the family registers how the
verdict reads it, `@reads(ThePart)` on a subclass of `Reading`. `engine.verdict.judge` keeps
the common prelude (the controls, not applicable, the effect, the evidence) and calls each
part's reading at the points of judgement below; every hook's default leaves the common rule
alone, so a reading overrides only the ones its family needs.

This module is pure and sits below the techniques: a family module imports it to register.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

from ..catalogue.prompt_checks import escaped
from ..models import AttackSpec, Effect, Exchange, Layer, Outcome, Part, Response, Transcript, Verdict

# A verdict, the layer that refused (None where no layer did), and the reason.
Judged = tuple[Verdict, Layer | None, str]

# How much of each reply a reason quotes: the evidence keeps them whole.
QUOTED = 200

P = TypeVar("P", bound=Part)


@dataclass(frozen=True, slots=True)
class Seen:
    """What the verdict has worked out before asking a part: the entry, the transcript, the attack's own calls, the effect."""

    spec: AttackSpec
    transcript: Transcript
    attack: tuple[Exchange, ...]
    effect: Effect


class Reading(Generic[P]):
    """How the verdict reads one kind of part. Each hook is one point of `judge`, in its order."""

    # What was judged is what the person read (prompt-forging): at the gate, the reply to the
    # attack's own staging calls is not passed over for another tool's.
    judges_what_was_read: bool = False

    def counts_effects(self, part: P) -> bool:
        """Whether the part counts the attack's effects itself, so an effect seen is not judged by the diff."""
        return False

    def moved(self, part: P, seen: Seen) -> Judged | None:
        """An effect happened (judged anywhere, not at the gate): the part's verdict on it, or None for the common one."""
        return None

    def still(self, part: P, seen: Seen) -> Judged | None:
        """Nothing moved, the attack was set up and every call filled: the part's verdict, before the findings'."""
        return None

    def unjudged(self, part: P, seen: Seen) -> Judged | None:
        """After the findings: the part may say nothing was judged (inconclusive) before a reply is read."""
        return None

    def stands(self, part: P, seen: Seen, refusal: Response, why: str, said: str) -> str | None:
        """A refusal not shown to be the gate's (`why`): the reason it stands anyway, or None."""
        return None

    def unshown(self, part: P, seen: Seen) -> str:
        """What the inconclusive reason adds when a refusal is not shown to be the gate's."""
        return ""

    def held(self, part: P, seen: Seen, said: str) -> str:
        """The reason of a refusal that stands: by default what the target said."""
        return said

    def evidence(self, part: P) -> tuple[str, ...]:
        """Lines the part adds to the evidence, after the notes."""
        return ()


# Keyed by the part's module and name, not its class object: a module imported again (pytest's
# in-process runs restore sys.modules between runs) makes a new class of the same part, and a technique
# kept from the first import records the old one.
_READINGS: dict[tuple[str, str], Reading[Any]] = {}


def _key(kind: type[Part]) -> tuple[str, str]:
    return kind.__module__, kind.__qualname__


def reads(kind: type[P]) -> Callable[[type[Reading[P]]], type[Reading[P]]]:
    """Register how the verdict reads parts of `kind`; one reading per kind (a reloaded module replaces its own)."""

    def register(cls: type[Reading[P]]) -> type[Reading[P]]:
        known = _READINGS.get(_key(kind))
        if known is not None and (type(known).__module__, type(known).__qualname__) != (
            cls.__module__,
            cls.__qualname__,
        ):
            raise ValueError(
                f"part {kind.__name__} is read twice ({type(known).__module__} and {cls.__module__})"
            )
        _READINGS[_key(kind)] = cls()
        return cls

    return register


def reading_of(part: Part) -> Reading[Any]:
    """The registered reading of a part; a part no reading registers is a bug, said in one line."""
    found = _READINGS.get(_key(type(part)))
    if found is None and type(part).__module__ not in sys.modules:
        # Its module left sys.modules after the part was made (an in-process pytest run restores them):
        # imported again, it registers its reading again.
        importlib.import_module(type(part).__module__)
        found = _READINGS.get(_key(type(part)))
    if found is None:
        raise LookupError(
            f"no reading registers {type(part).__name__}: decorate one with @reads({type(part).__name__})"
        )
    return found


def layer_of(response: Response) -> Layer:
    if response.outcome is Outcome.TRANSPORT:
        return Layer.TRANSPORT
    if response.refused_by_boundary:
        return Layer.SDK_BOUNDARY
    if response.outcome is Outcome.RPC_ERROR:
        return Layer.PROTOCOL
    return Layer.TOOL


def literal(value: Any) -> str:
    """A value as JSON, in printable ASCII with one escape per code point.

    Escaped, never raw: hostile names carry line breaks and bidi controls, and
    evidence must show their exact code points, not be rearranged by them. The
    escapes are the ones every finding about a name uses (`\\u202e`,
    `\\U000e0069`, never a surrogate pair), so one notation runs through a report.
    """
    # Every exchange of every attack's evidence is written this way (`verdict.describe`): what a
    # request or reply holds is told by checks in C first (a dict by its type, before any
    # isinstance; a constant without json.dumps), lists, not generators, are joined, and an item
    # that is a str (most are) is escaped without coming back here.
    if type(value) is dict:
        return _object(value)
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join([escaped(v) if type(v) is str else literal(v) for v in value]) + "]"
    if value is None or value is True or value is False:
        return _JSON_CONSTANTS[value]
    if isinstance(value, Mapping):
        return _object(value)
    return json.dumps(value, ensure_ascii=True, default=str)


def _object(value: Mapping[Any, Any]) -> str:
    """A mapping as `literal` writes it: its keys sorted."""
    pairs = [
        f"{_key_text(k)}: {escaped(v) if type(v) is str else literal(v)}" for k, v in sorted(value.items())
    ]
    return "{" + ", ".join(pairs) + "}"


@lru_cache(maxsize=256, typed=True)  # typed: 1 and True are other keys, written "1" and "True"
def _key_text(key: Hashable) -> str:
    """A key as `literal` writes it: the same few (`path`, `name`, `action`) in every exchange, escaped once."""
    return escaped(str(key))


# What json.dumps writes for each of them.
_JSON_CONSTANTS = {None: "null", True: "true", False: "false"}


def quoted(response: Response) -> str:
    """What a reply said (or its outcome), shortened and escaped for a reason."""
    return literal((response.text or response.outcome.value)[:QUOTED])
