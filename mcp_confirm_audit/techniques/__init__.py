"""The registry of attack techniques: one decorator, one dict, duplicates rejected.

A technique is an async function `(attack, params) -> None` that drives the
target through `attack` and leaves everything it saw in the transcript. It
never decides a verdict: `verdict.judge` does, from the transcript alone.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Attack

Technique = Callable[["Attack", Mapping[str, Any]], Awaitable[None]]

_REGISTRY: dict[str, Technique] = {}


def technique(name: str) -> Callable[[Technique], Technique]:
    def register(fn: Technique) -> Technique:
        known = _REGISTRY.get(name)
        # The same function imported again (a module reloaded by a test
        # runner) replaces itself; a second function under one name is a bug.
        if known is not None and (known.__module__, known.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ValueError(
                f"technique {name!r} is registered twice ({known.__module__} and {fn.__module__})"
            )
        _REGISTRY[name] = fn
        return fn

    return register


def load() -> dict[str, Technique]:
    """Import every technique module once, so each registers itself."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_") and info.name != "base":
            importlib.import_module(f"{__name__}.{info.name}")
    return dict(_REGISTRY)
