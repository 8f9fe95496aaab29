"""The `hook` effect: a conftest's `pytest_mcp_snapshot`, reached through the plugin's helper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from probe_env import FakeEnv, observe

from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.oracle.effects import ProbeSpec, build_probe, changes
from mcp_confirm_audit.oracle.kinds.hook import HOOK_NAME, merged
from mcp_confirm_audit.run.hookspecs import snapshot_call, snapshot_probe


def test_the_value_a_plain_function_of_the_root_returns_is_compared(tmp_path: Path) -> None:
    arm = {"joints": [0, 15, 30]}
    seen: list[Path] = []

    def snapshot(root: Path) -> Any:
        seen.append(root)
        return {"arm": dict(arm), "at": (1, 2)}

    spec = ProbeSpec("hook", HOOK_NAME, {"call": snapshot})
    env = FakeEnv(tmp_path)
    before = observe(spec, env)
    arm["joints"] = [0, 45, 30]
    after = observe(spec, env)
    assert seen == [tmp_path, tmp_path]
    assert before["at"] == [1, 2]  # as JSON holds it
    assert changes(HOOK_NAME, before, after) == ["hook:pytest_mcp_snapshot.arm.joints[1]"]


def test_a_value_that_is_not_json_is_a_usage_error_saying_what_to_return(tmp_path: Path) -> None:
    spec = ProbeSpec("hook", HOOK_NAME, {"call": lambda root: {"when": {1, 2}}})
    with pytest.raises(UsageError, match=r"not JSON.*return dicts, lists"):
        observe(spec, FakeEnv(tmp_path))


def test_a_hook_spec_without_a_function_is_refused() -> None:
    with pytest.raises(ValueError, match="'call' must be a function"):
        build_probe(ProbeSpec("hook", HOOK_NAME, {}))


def test_results_of_several_implementations_are_merged() -> None:
    assert merged([]) is None
    assert merged([[1]]) == [1]
    assert merged([{"arm": 1}, {"queue": 2}]) == {"arm": 1, "queue": 2}
    assert merged([{"arm": 1}, [2]]) == [{"arm": 1}, [2]]
    with pytest.raises(UsageError, match="two pytest_mcp_snapshot implementations return the key 'arm'"):
        merged([{"arm": 1}, {"arm": 2}])


CONFTEST = """
import json
from pathlib import Path


def pytest_mcp_snapshot(root, config):
    return {"state": json.loads((Path(root) / "state.json").read_text())}
"""

CONFTEST_TOO = """
def pytest_mcp_snapshot(root):
    return {"queue": ["job-1"]}
"""

TEST = """
import asyncio
from pathlib import Path

from mcp_confirm_audit.run.hookspecs import snapshot_call, snapshot_probe
from mcp_confirm_audit.oracle.effects import build_probe


class Env:
    def __init__(self, root):
        self.root = root


def test_reachable(pytestconfig, tmp_path):
    (tmp_path / "state.json").write_text('{"armed": false}')
    call = snapshot_call(pytestconfig)
    assert call is not None
    assert call(tmp_path) == {"state": {"armed": False}, "queue": ["job-1"]}
    probe = build_probe(snapshot_probe(pytestconfig))
    assert probe.name == "hook:pytest_mcp_snapshot"
    assert asyncio.run(probe.observe(Env(tmp_path)))["state"] == {"armed": False}
"""


def test_a_conftest_implementing_the_hook_is_reachable_through_the_helper(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.mkpydir("sub").joinpath("conftest.py").write_text(CONFTEST_TOO)
    pytester.path.joinpath("sub", "test_snapshot.py").write_text(TEST)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_without_an_implementation_there_is_no_hook_probe(pytestconfig: pytest.Config) -> None:
    # No conftest of this suite implements the hook.
    assert snapshot_call(pytestconfig) is None
    assert snapshot_probe(pytestconfig) is None
