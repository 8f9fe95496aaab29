"""The `hook` effect: whatever a user's conftest.py says the action changes.

For what no other kind reaches (a robot's controller over its own protocol,
a queue, a cloud emulator), a conftest.py implements `pytest_mcp_snapshot`
(see `mcp_confirm_audit.run.hookspecs`). The oracle does not import pytest: this
probe calls a plain function of the root, which the plugin builds from the
hook, and compares what it returns before and after.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from ...errors import UsageError
from ..effects import ProbeEnv, ProbeSpec, probe_kind

Snapshot = Callable[[Path], Any]
HOOK_NAME = "hook:pytest_mcp_snapshot"


@dataclass(frozen=True, slots=True)
class HookProbe:
    name: str
    call: Snapshot

    async def observe(self, env: ProbeEnv) -> Any:
        # In a thread: a user's hook may block, or run an event loop of its own.
        value = await anyio.to_thread.run_sync(self.call, env.root, abandon_on_cancel=True)
        return as_json(self.name, value)


@probe_kind("hook")
def hook_probe(spec: ProbeSpec) -> HookProbe:
    call = spec.options.get("call")
    if not callable(call):
        raise ValueError(f"effect {spec.name}: 'call' must be a function of the root")
    return HookProbe(spec.name, call)


def as_json(name: str, value: Any) -> Any:
    """`value` as JSON holds it (tuples as lists, keys as text), or a UsageError saying what to return."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise UsageError(
            f"{name} returned a value that is not JSON ({exc}); return dicts, lists, strings, numbers, "
            "booleans or None"
        ) from None


def merged(results: list[Any]) -> Any:
    """What several implementations returned, as one value.

    One result is itself; mappings are merged into one (a key two of them
    return is a UsageError: each would hide the other's change); anything
    else is the list of results, in pluggy's call order, which is fixed for a run.
    """
    if not results:
        return None
    if len(results) == 1:
        return results[0]
    if all(isinstance(r, Mapping) for r in results):
        out: dict[str, Any] = {}
        for result in results:
            for key, value in result.items():
                if key in out:
                    raise UsageError(
                        f"two pytest_mcp_snapshot implementations return the key {key!r}; give each its own"
                    )
                out[key] = value
        return out
    return list(results)
