"""A profile's `effect:` and `ignore:`: the contract's shapes, and one clear line for each mistake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from probe_env import FakeEnv, observe

from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.oracle.effect_spec import parse_effect, parse_effects, parse_ignore
from mcp_confirm_audit.oracle.effects import ProbeSpec, build_probe, is_ignored

CONTRACT = """
effect:
  - tool: list_payments
  - tool: {name: get_robot_state, args: {arm: 1}}
  - file: ledger.json
  - sqlite: {path: app.db, query: "select * from payments order by id"}
  - sink: true
ignore: [audit.jsonl, "updated_at"]
"""


def test_the_profile_contract_reads_into_probe_specs() -> None:
    profile = yaml.safe_load(CONTRACT)
    specs = parse_effects(profile["effect"], "pay.yaml")
    assert specs == (
        ProbeSpec("tool", "tool:list_payments", {"tool": "list_payments"}),
        ProbeSpec("tool", "tool:get_robot_state", {"tool": "get_robot_state", "args": {"arm": 1}}),
        ProbeSpec("file", "file:ledger.json", {"path": "ledger.json"}),
        ProbeSpec(
            "sqlite", "sqlite:app.db", {"path": "app.db", "query": "select * from payments order by id"}
        ),
        ProbeSpec("sink", "sink", {}),
    )
    assert all(build_probe(s).name == s.name for s in specs)
    assert parse_ignore(profile["ignore"], "pay.yaml") == ("audit.jsonl", "updated_at")


def test_a_read_only_tool_is_called_with_its_arguments(tmp_path: Path) -> None:
    env = FakeEnv(tmp_path, results={"get_robot_state": {"joints": [0, 15]}})
    spec = parse_effect({"tool": {"name": "get_robot_state", "args": {"arm": 1}}}, "arm.yaml")
    assert observe(spec, env) == {"joints": [0, 15]}
    assert observe(parse_effect({"tool": "get_robot_state"}, "arm.yaml"), env) == {"joints": [0, 15]}
    assert env.calls == [("get_robot_state", {"arm": 1}), ("get_robot_state", {})]


def test_two_probes_with_one_name_are_told_apart() -> None:
    entries = [{"tool": {"name": "get_arm", "args": {"arm": n}}} for n in (1, 2)]
    assert [s.name for s in parse_effects(entries, "arm.yaml")] == ["tool:get_arm", "tool:get_arm#2"]
    with pytest.raises(UsageError, match="listed twice"):
        parse_effects([{"file": "a.json"}, {"file": "a.json"}], "p.yaml")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "ledger.json",
            "must be a mapping with one key, one of tool, file, sqlite, sink; e.g. '- file: ledger.json'",
        ),
        ({"file": "a", "tool": "b"}, "must be a mapping with one key"),
        ({"table": "payments"}, "unknown kind 'table'; known: tool, file, sqlite, sink"),
        ({"tool": ""}, "'tool' must name a read-only tool"),
        ({"tool": {"args": {"arm": 1}}}, "'tool' needs a 'name'"),
        (
            {"tool": {"name": "get", "arguments": {}}},
            "unknown key 'arguments' under 'tool'; known: name, args",
        ),
        ({"tool": {"name": "get", "args": [1]}}, "'args' must map argument names to values"),
        ({"file": "/var/lib/app/ledger.json"}, "is absolute; name a file relative to the root"),
        ({"file": "../ledger.json"}, "leaves the root"),
        ({"file": 3}, "the path must be a string relative to the root"),
        ({"sqlite": "app.db"}, "'sqlite' must be {path: app.db, query:"),
        ({"sqlite": {"path": "app.db"}}, "'sqlite' needs a 'query'"),
        (
            {"sqlite": {"path": "app.db", "query": "select 1", "mode": "rw"}},
            "unknown key 'mode' under 'sqlite'",
        ),
        ({"sqlite": {"path": "app.db", "query": "update t set a = 1"}}, "starts with UPDATE; only a SELECT"),
        ({"sink": False}, "write 'sink: true'"),
        ({"sink": "http://example.com"}, "write 'sink: true'"),
    ],
)
def test_a_wrong_effect_is_one_line_naming_the_profile_and_the_fix(entry: Any, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_effect(entry, "targets/pay.yaml")
    text = str(caught.value)
    assert text.startswith("profile targets/pay.yaml: effect ")
    assert message in text
    assert "\n" not in text


def test_effect_must_be_a_list() -> None:
    with pytest.raises(UsageError, match="'effect' must be a list of effects"):
        parse_effects({"file": "ledger.json"}, "p.yaml")
    assert parse_effects(None, "p.yaml") == ()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("audit.jsonl", "'ignore' must be a list"),
        ([""], "must be a non-empty string"),
        ([3], "must be a non-empty string"),
        (["/var/log/app.log"], "is absolute"),
        (["../outside.txt"], "leaves the root"),
    ],
)
def test_a_wrong_ignore_is_one_line(value: Any, message: str) -> None:
    with pytest.raises(UsageError, match=f"^profile p.yaml: .*{message}"):
        parse_ignore(value, "p.yaml")


def test_ignore_patterns_are_normalised_and_hide_what_they_name() -> None:
    patterns = parse_ignore(["./logs/", "audit.jsonl", "audit.jsonl", "updated_at"], "p.yaml")
    assert patterns == ("logs", "audit.jsonl", "updated_at")
    assert is_ignored("root/logs/today.log", patterns)
    assert is_ignored("root/audit.jsonl", patterns)
    assert is_ignored("tool:list_jobs[4].updated_at", patterns)
    assert not is_ignored("root/001-case/victim.txt", patterns)
    assert not is_ignored("tool:list_jobs[4].status", patterns)


def test_every_kind_is_registered_and_an_unknown_one_is_named_with_the_known() -> None:
    with pytest.raises(
        ValueError, match="unknown effect kind 'table'; known: file, hook, sink, sqlite, tool"
    ):
        build_probe(ProbeSpec("table", "table:payments"))
