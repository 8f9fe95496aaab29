"""Hooks a conftest.py may implement to show the audit an effect it cannot see by itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..oracle.effects import ProbeSpec

# The plugin registers this module in every pytest run: the oracle is imported only when asked for.


@pytest.hookspec
def pytest_mcp_snapshot(root: Path, config: pytest.Config) -> Any:
    """A JSON-able value showing what the confirmed action may change; compared before and after.

    Called before and after every confirmed action (and around the controls,
    so what changes on its own is learned as bookkeeping). `root` is the
    target's root of that run. Return None to add nothing. Values of several
    implementations are merged: mappings into one mapping, anything else into
    a list. Keep it read-only and quick: it is one more round trip per check.

    A conftest.py next to your tests, for a robot arm that reports its joints
    on its own HTTP port::

        import json
        import urllib.request


        def pytest_mcp_snapshot(root, config):
            with urllib.request.urlopen("http://127.0.0.1:8765/joints", timeout=5) as reply:
                return {"joints": json.load(reply)}

    A change is then named like any other effect, `hook:pytest_mcp_snapshot.joints[1]`.
    """


def snapshot_call(config: pytest.Config) -> Callable[[Path], Any] | None:
    """The conftests' `pytest_mcp_snapshot` as a function of the root; None when none implements it.

    Ask after conftest files are loaded (a conftest in a test folder is
    loaded when that folder is collected).
    """
    from ..oracle.kinds.hook import merged

    hook = config.hook.pytest_mcp_snapshot
    if not hook.get_hookimpls():
        return None

    def call(root: Path) -> Any:
        return merged(hook(root=root, config=config))

    return call


def snapshot_probe(config: pytest.Config) -> ProbeSpec | None:
    """The `hook` effect spec for the conftests' `pytest_mcp_snapshot`, if any conftest has one."""
    from ..oracle.effects import ProbeSpec
    from ..oracle.kinds.hook import HOOK_NAME

    call = snapshot_call(config)
    return None if call is None else ProbeSpec("hook", HOOK_NAME, {"call": call})
