"""Effects beyond the sandbox tree: the one protocol every kind of probe speaks, and the one differ.

A probe observes something the confirmed action may change (a read-only
tool's result, a file's rows, a database query, the requests the harness's
sink received) and returns it as a JSON-able value. Probes do I/O; judging
does not: the transcript records what each probe saw before and after, and
`changes` compares the two, a pure function the verdict calls.

A kind is one small module in this folder, registered with `@probe_kind`;
the engine knows `EffectProbe`, never files, tables or sinks.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ProbeSpec:
    """One entry of a profile's `effect:` list, or one learned by zero configuration."""

    kind: str  # "tool", "file", "sqlite", "sink", "hook"
    # How reports and `ignore:` name what it sees: "tool:list_payments", "file:ledger.json".
    name: str
    options: Mapping[str, Any] = field(default_factory=dict)


class ProbeEnv(Protocol):
    """What a probe may use to look: the root, a read-only call, the sink."""

    @property
    def root(self) -> Path: ...

    async def call_read_only(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        """The JSON value of a tool's result: structured content, else JSON text, else the text."""
        ...

    def sink_requests(self) -> list[dict[str, Any]]:
        """Every request the harness's loopback sink has received so far, in order."""
        ...


class EffectProbe(Protocol):
    @property
    def name(self) -> str: ...

    async def observe(self, env: ProbeEnv) -> Any:
        """A JSON-able value; equal before and after when the action did nothing this probe can see."""
        ...


ProbeFactory = Callable[[ProbeSpec], EffectProbe]
_KINDS: dict[str, ProbeFactory] = {}


def probe_kind(kind: str) -> Callable[[ProbeFactory], ProbeFactory]:
    def register(factory: ProbeFactory) -> ProbeFactory:
        known = _KINDS.get(kind)
        if known is not None and (known.__module__, known.__qualname__) != (
            factory.__module__,
            factory.__qualname__,
        ):
            raise ValueError(f"probe kind {kind!r} is registered twice")
        _KINDS[kind] = factory
        return factory

    return register


def build_probe(spec: ProbeSpec) -> EffectProbe:
    from . import kinds  # noqa: F401  (each module registers its kind)

    try:
        factory = _KINDS[spec.kind]
    except KeyError:
        raise ValueError(f"unknown effect kind {spec.kind!r}; known: {', '.join(sorted(_KINDS))}") from None
    return factory(spec)


# -- judging: pure ---------------------------------------------------------------

# The value recorded for a probe that could not look (the target stopped
# answering): never compared, because a crash is not an effect.
UNOBSERVED = "$unobserved"
# A probe name observed on another connection than the first: `tool:list@replica-1-2`.
_PLACE = re.compile(r"@[^.\[]+")


def probe_changes(
    before: Mapping[str, Any], after: Mapping[str, Any], bookkeeping: Iterable[str]
) -> tuple[list[str], list[str]]:
    """(the changes that count, the changes that are bookkeeping) between two observations."""
    patterns = tuple(bookkeeping)
    counted: list[str] = []
    ignored: list[str] = []
    for name in sorted(set(before) & set(after)):
        was, now = before[name], after[name]
        if _unobserved(was) or _unobserved(now):
            continue
        for path in changes(name, was, now):
            (ignored if is_ignored(_PLACE.sub("", path), patterns) else counted).append(path)
    return counted, ignored


def _unobserved(value: Any) -> bool:
    return isinstance(value, Mapping) and UNOBSERVED in value


_INDEX = re.compile(r"\[\d+\]")


def changes(name: str, before: Any, after: Any) -> list[str]:
    """Every place where `after` differs from `before`, named `name.field[3].cell`.

    Mappings are compared key by key and lists item by item, so one changed
    cell of one row is named as that cell, not as the whole table.
    """
    out: list[str] = []
    _walk(name, before, after, out)
    return out


def _walk(where: str, a: Any, b: Any, out: list[str]) -> None:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b), key=str):
            _walk(f"{where}.{key}", a.get(key, _ABSENT), b.get(key, _ABSENT), out)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            _walk(f"{where}[{i}]", a[i] if i < len(a) else _ABSENT, b[i] if i < len(b) else _ABSENT, out)
    elif a != b:
        out.append(where)


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def generalised(path: str) -> str:
    """A change's name with list positions wildcarded: what one bookkeeping pattern covers."""
    return _INDEX.sub("[*]", path)


def is_ignored(path: str, patterns: Iterable[str]) -> bool:
    """Whether a change (a probe path or a sandbox entry) is bookkeeping.

    A pattern names a probe path (`tool:get_state.updated_at`, `tool:list_jobs[*].updated_at`),
    a bare field name that matches that field anywhere in a probe's value (`updated_at`), or a
    sandbox path or glob, with or without its `root/` (`root/audit.jsonl`, `audit.jsonl`, `logs/*`).
    """
    general = generalised(path)
    probe = ":" in path.split("/", 1)[0] or path == "sink" or path.startswith(("sink.", "sink["))
    fields = set(re.findall(r"\.([^.\[\]]+)", general)) if probe else set()
    for pattern in patterns:
        if pattern in (path, general):
            return True
        if general.startswith((f"{pattern}.", f"{pattern}[")):
            return True
        if probe:
            if pattern in fields or fnmatch.fnmatchcase(general, pattern):
                return True
            continue
        for spelled in (pattern, f"root/{pattern}"):
            if fnmatch.fnmatchcase(path, spelled) or path.startswith(f"{spelled.rstrip('/')}/"):
                return True
    return False
