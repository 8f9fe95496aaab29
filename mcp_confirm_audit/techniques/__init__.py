"""The registry of attack techniques: one decorator, one dict, duplicates rejected.

A technique is an async function `(attack, params) -> None` that drives the
target through `attack` and leaves everything it saw in the transcript. It
never decides a verdict: `verdict.judge` does, from the transcript alone.

A family says what it is where it is registered (`@technique(name, ...traits)`):
the mechanisms it runs over, why a legacy question cannot carry it, whether its
premise is that the person was asked, whether it waits out a lifetime, which
peers it opens. The registry is the only list of families: nothing else keeps
a set of their names. A trait the decorator does not know is a TypeError at
import; a value it does not know is a ValueError naming the family.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..confirmations.base import Mechanism
    from ._params import Params
    from .base import Attack

Technique = Callable[["Attack", Mapping[str, Any]], Awaitable[None]]

# Every kind of confirmation a family can run over (`Mechanism.kind`).
MECHANISMS = frozenset({"mrtr", "elicitation", "token", "pending", "flag", "waits"})
# The default: the family drives question-and-answer rounds, MRTR or over the legacy back channel.
ROUNDS = frozenset({"mrtr", "elicitation"})
# Every mechanism: the family judges an approval whatever form it takes.
ANY = MECHANISMS
# Rounds, and the flows whose preview (or the question a waiting call shows) is what the person reads:
# a swap between preview and confirm is the same attack.
OVER_A_PREVIEW = frozenset({*ROUNDS, "token", "pending", "waits"})
# The peers a family may need opened ahead of it (`Peers`' methods).
PEERS = frozenset({"declaring", "in_era", "replicas", "short_lived"})


@dataclass(frozen=True, slots=True)
class Traits:
    """What is true of a family, declared where it is registered."""

    mechanisms: frozenset[str] = ROUNDS
    # Why a legacy question (the server's own elicitation/create) cannot carry the attack: the
    # families whose attack is the request state itself. None: it runs over legacy questions too.
    needs_state: str | None = None
    # Its premise is that the person was asked and answered: "asked the user" says nothing there.
    premise_asked: bool = False
    # It waits out a confirmation's lifetime (`ttl:`), which its budget adds.
    waits_lifetime: bool = False
    # It drives two eras itself (the primary's and the other): a result's era is not the tool's.
    both_eras: bool = False
    # Peers it opens, started ahead where that costs a process (`Peers.declaring`, `Peers.in_era`,
    # `Peers.replicas`, `Peers.short_lived`).
    opens: frozenset[str] = frozenset()
    # It still runs when the honest flow never completed (the tool never asked, and nothing acted):
    # its finding is an effect the attack itself brought about, which needs no honest flow to compare
    # with (a caller's own switch that is the only gate). Without an effect it stays inconclusive.
    without_an_honest_flow: bool = False
    # Its hostile part is an input value (a path, a name, a token, an id, text the question shows), sent
    # beside its benign twin (`_twins.py`, `_twins_closed.py`): an inconclusive result of it on a careful
    # server is the harness's call gone wrong.
    input_value: bool = False


_REGISTRY: dict[str, Technique] = {}
_TRAITS: dict[str, Traits] = {}
_PARAMS: dict[str, type[Params]] = {}


def technique(
    name: str,
    *,
    mechanisms: Iterable[str] = ROUNDS,
    needs_state: str | None = None,
    premise_asked: bool = False,
    waits_lifetime: bool = False,
    both_eras: bool = False,
    opens: Iterable[str] = (),
    without_an_honest_flow: bool = False,
    input_value: bool = False,
    params: type[Params] | None = None,
) -> Callable[[Technique], Technique]:
    """Register a technique under `name` with its family's traits and the model of its `params:`."""
    traits = Traits(
        frozenset(mechanisms),
        needs_state,
        premise_asked,
        waits_lifetime,
        both_eras,
        frozenset(opens),
        without_an_honest_flow,
        input_value,
    )
    _check(name, traits)

    def register(fn: Technique) -> Technique:
        known = _REGISTRY.get(name)
        # The same function imported again (a module reloaded by a test
        # runner) replaces itself; a second function under one name is a bug.
        if known is not None and (known.__module__, known.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ValueError(
                f"technique {name!r} is registered twice ({known.__module__} and {fn.__module__})"
            )
        _REGISTRY[name] = fn
        _TRAITS[name] = traits
        if params is not None:
            _PARAMS[name] = params
        else:
            _PARAMS.pop(name, None)
        return fn

    return register


def _check(name: str, traits: Traits) -> None:
    unknown = sorted(traits.mechanisms - MECHANISMS)
    if unknown:
        raise ValueError(
            f"technique {name!r}: mechanisms= names {', '.join(unknown)}; known: {', '.join(sorted(MECHANISMS))}"
        )
    if "mrtr" not in traits.mechanisms:
        raise ValueError(
            f"technique {name!r}: mechanisms= must include mrtr (every family runs over MRTR rounds)"
        )
    if traits.needs_state is not None and "elicitation" in traits.mechanisms:
        raise ValueError(
            f"technique {name!r}: needs_state= says a legacy question cannot carry it, so mechanisms= "
            "must leave out elicitation"
        )
    unknown = sorted(traits.opens - PEERS)
    if unknown:
        raise ValueError(
            f"technique {name!r}: opens= names {', '.join(unknown)}; known: {', '.join(sorted(PEERS))}"
        )


_loaded: list[bool] = []


def load() -> dict[str, Technique]:
    """Import every technique module once, so each registers itself."""
    _import_all()
    return dict(_REGISTRY)


def _import_all() -> None:
    if not _loaded:
        for info in pkgutil.iter_modules(__path__):
            if not info.name.startswith("_") and info.name != "base":
                importlib.import_module(f"{__name__}.{info.name}")
        _loaded.append(True)


def traits() -> dict[str, Traits]:
    """Every registered family's traits (every technique module imported first)."""
    _import_all()
    return dict(_TRAITS)


def traits_of(family: str) -> Traits | None:
    """One family's traits; None for a name no technique registers (a retired family in an old report)."""
    # Asked several times per attack: the registry is read, not copied.
    if not _loaded:
        _import_all()
    return _TRAITS.get(family)


def params_models() -> dict[str, type[Params]]:
    """Every registered technique's model of its catalogue `params:` (`NoParams` where it declared none)."""
    from ._params import NoParams

    return {name: _PARAMS.get(name, NoParams) for name in load()}


def families(mechanism: str) -> frozenset[str]:
    """The families that run over `mechanism` (a `Mechanism.kind`)."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"no mechanism {mechanism!r}; known: {', '.join(sorted(MECHANISMS))}")
    return frozenset(name for name, t in traits().items() if mechanism in t.mechanisms)


def mrtr_only(family: str, mechanism: Mechanism | None) -> str | None:
    """Why a family does not apply to a tool that confirms with `mechanism`; None if it applies."""
    if mechanism is None:
        return None
    found = traits_of(family)
    if found is None:
        raise ValueError(f"no technique registers the family {family!r}")
    kind = mechanism.kind
    if kind == "elicitation" and found.needs_state is not None:
        return found.needs_state
    if kind in found.mechanisms:
        return None
    if kind == "flag" and "token" in found.mechanisms:
        return (
            f"a flag flow has no preview: the one call that sets the flag is all there is, so nothing "
            f"is shown to a human and nothing can change between what was shown and what is confirmed "
            f"({mechanism.describe()})"
        )
    return f"the tool confirms with a {kind} flow, not MRTR input requests: {mechanism.describe()}"
