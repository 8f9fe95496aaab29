"""A profile's `effect:` and `ignore:` keys, read into probe specs and patterns.

    effect:
      - tool: list_payments                       # a read-only tool's result
      - tool: {name: get_robot_state, args: {arm: 1}}
      - file: ledger.json                         # a file under the root (CSV by row and cell)
      - sqlite: {path: app.db, query: "select * from payments order by id"}
      - sink: true                                # the requests the harness's sink at {sink} received
    ignore: [audit.jsonl, "updated_at"]           # root paths or result fields that are bookkeeping

Every mistake is one line naming the profile, what is wrong, and how to fix it.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from ..errors import UsageError
from .beneath import relative_path
from .effects import ProbeSpec
from .kinds.sqlite_rows import read_only_query

KINDS = ("tool", "file", "sqlite", "sink")
_EXAMPLE = "e.g. '- file: ledger.json' or '- tool: list_payments'"
_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60


def parse_effects(value: Any, source: str) -> tuple[ProbeSpec, ...]:
    """Every entry of `effect:`; two probes with one name are told apart as `name#2`."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise UsageError(f"profile {source}: 'effect' must be a list of effects, {_EXAMPLE}")
    specs: list[ProbeSpec] = []
    for entry in value:
        spec = parse_effect(entry, source)
        if spec in specs:
            raise UsageError(f"profile {source}: effect {_short.repr(entry)} is listed twice; keep one")
        taken = {s.name for s in specs}
        name, n = spec.name, 2
        while name in taken:
            name, n = f"{spec.name}#{n}", n + 1
        specs.append(ProbeSpec(spec.kind, name, spec.options))
    return tuple(specs)


def parse_effect(entry: Any, source: str) -> ProbeSpec:
    """One entry of `effect:` as a ProbeSpec, or a UsageError saying what is wrong and how to fix it."""
    where = f"profile {source}: effect {_short.repr(entry)}"
    if not isinstance(entry, Mapping) or len(entry) != 1:
        raise UsageError(f"{where} must be a mapping with one key, one of {', '.join(KINDS)}; {_EXAMPLE}")
    ((kind, value),) = entry.items()
    if kind == "tool":
        return _tool(where, value)
    if kind == "file":
        path = _path(where, value)
        return ProbeSpec("file", f"file:{path}", {"path": str(path)})
    if kind == "sqlite":
        return _sqlite(where, value)
    if kind == "sink":
        if value is not True:
            raise UsageError(
                f"{where}: write 'sink: true' to watch the requests the sink at {{sink}} receives"
            )
        return ProbeSpec("sink", "sink", {})
    raise UsageError(
        f"{where}: unknown kind {kind!r}; known: {', '.join(KINDS)} (for anything else, implement pytest_mcp_snapshot in a conftest.py)"
    )


def _tool(where: str, value: Any) -> ProbeSpec:
    if isinstance(value, str) and value.strip():
        return ProbeSpec("tool", f"tool:{value}", {"tool": value})
    if not isinstance(value, Mapping):
        raise UsageError(f"{where}: 'tool' must name a read-only tool, or be {{name: TOOL, args: {{...}}}}")
    unknown = sorted(set(map(str, value)) - {"name", "args"})
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} under 'tool'; known: name, args")
    name, args = value.get("name"), value.get("args", {})
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"{where}: 'tool' needs a 'name', e.g. {{name: get_robot_state, args: {{arm: 1}}}}")
    if not isinstance(args, Mapping) or not all(isinstance(k, str) for k in args):
        raise UsageError(f"{where}: 'args' must map argument names to values, e.g. {{arm: 1}}")
    return ProbeSpec("tool", f"tool:{name}", {"tool": name, "args": dict(args)})


def _sqlite(where: str, value: Any) -> ProbeSpec:
    example = "{path: app.db, query: 'select * from payments order by id'}"
    if not isinstance(value, Mapping):
        raise UsageError(f"{where}: 'sqlite' must be {example}")
    unknown = sorted(set(map(str, value)) - {"path", "query"})
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} under 'sqlite'; known: path, query")
    query = value.get("query")
    if not isinstance(query, str):
        raise UsageError(f"{where}: 'sqlite' needs a 'query', e.g. {example}")
    path = _path(where, value.get("path"))
    try:
        read_only_query(query)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return ProbeSpec("sqlite", f"sqlite:{path}", {"path": str(path), "query": query})


def _path(where: str, value: Any) -> PurePosixPath:
    if not isinstance(value, str):
        raise UsageError(f"{where}: the path must be a string relative to the root, e.g. ledger.json")
    try:
        return relative_path(value)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None


def parse_ignore(value: Any, source: str) -> tuple[str, ...]:
    """`ignore:` as patterns for `effects.is_ignored`: root paths (or globs) and result fields."""
    if value is None:
        return ()
    example = "e.g. ignore: [audit.jsonl, updated_at]"
    if not isinstance(value, list):
        raise UsageError(f"profile {source}: 'ignore' must be a list of root paths or field names, {example}")
    patterns: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise UsageError(f"profile {source}: ignore entry {_short.repr(item)} must be a non-empty string")
        pattern = item.strip().removeprefix("./").rstrip("/") or item.strip()
        if pattern.startswith("/"):
            raise UsageError(
                f"profile {source}: ignore entry {item!r} is absolute; name it relative to the root, "
                "e.g. audit.jsonl (nothing outside the root is ever bookkeeping)"
            )
        if ".." in pattern.split("/"):
            raise UsageError(
                f"profile {source}: ignore entry {item!r} leaves the root ('..'); "
                "nothing outside the root is ever bookkeeping"
            )
        if pattern not in patterns:
            patterns.append(pattern)
    return tuple(patterns)
