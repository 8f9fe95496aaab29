"""A profile's `effect:` and `ignore:` entries, read into probe specs with one-line errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UsageError
from .effects import ProbeSpec

_KINDS = ("tool", "file", "sqlite", "sink")


def parse_effect(entry: Any, source: str) -> ProbeSpec:
    if not isinstance(entry, Mapping) or len(entry) != 1:
        raise UsageError(
            f"profile {source}: each effect: entry is one of {', '.join(_KINDS)}, e.g. '- tool: list_payments'"
        )
    ((kind, value),) = entry.items()
    if kind == "tool":
        if isinstance(value, str):
            return ProbeSpec("tool", f"tool:{value}", {"tool": value, "args": {}})
        if isinstance(value, Mapping) and isinstance(value.get("name"), str):
            return ProbeSpec(
                "tool", f"tool:{value['name']}", {"tool": value["name"], "args": value.get("args") or {}}
            )
    elif kind == "file" and isinstance(value, str):
        return ProbeSpec("file", f"file:{value}", {"path": value})
    elif kind == "sqlite" and isinstance(value, Mapping):
        return ProbeSpec("sqlite", f"sqlite:{value.get('path')}", dict(value))
    elif kind == "sink" and value is True:
        return ProbeSpec("sink", "sink", {})
    raise UsageError(f"profile {source}: effect: {kind}: {value!r} is not a valid {kind} effect")


def parse_ignore(value: Any, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f"profile {source}: 'ignore' must be a list of root paths or result fields")
    return tuple(value)
