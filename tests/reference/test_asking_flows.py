"""The honest flows of the two mechanisms that ask in the call itself, run by their controls in process.

MRTR (2026-07-28: `input_required`, the person's answer in the next round's `inputResponses`) and
legacy elicitation (2025-11-25: the server's `elicitation/create` while its `tools/call` is open,
answered over the back channel) are what every audit of an asking tool starts with: approve ->
the effect, decline, cancel and a negative answer -> none. Here `engine.controls.run_controls`
runs directly, with no session and no audit, over the primary connection of a world
(`engine/world.py`) holding the reference server (MRTR) or the legacy one (elicitation) in process.
Each flow passes on the careful server and its decline fails on the one whose decline proceeds as
an accept, so the check is one that can fail. The token, pending and flag flows are in
test_honest_flows.py; a waits flow needs a terminal, and is proven over a pty in
tests/matrix/test_elsewhere.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mcp_confirm_audit.engine.connection_key import PRIMARY
from mcp_confirm_audit.engine.controls import ControlOutcome, run_controls
from mcp_confirm_audit.engine.world import Stats, World
from mcp_confirm_audit.profile.loader import Profile, profile_from_mapping
from mcp_confirm_audit.target.discovery import look_around, plan_tools

TARGETS = Path(__file__).resolve().parents[2] / "targets"
REFERENCE = f"py:{TARGETS / 'reference' / 'server.py'}:build_server"
LEGACY = f"py:{TARGETS / 'legacy' / 'server.py'}:build_server"
# The era each mechanism's connection negotiates.
SERVERS = {"mrtr": "2026-07-28", "elicitation": "2025-11-25"}


def _profile(mechanism: str, flaws: tuple[str, ...]) -> Profile:
    raw: dict[str, Any] = {"tool": "delete_file", "call_timeout": 10.0}
    if mechanism == "mrtr":
        raw |= {"command": REFERENCE, "factory_args": {"flaws": list(flaws)}}
    else:
        factory = {"flaws": list(flaws), "answer_timeout": 2.0}
        raw |= {"command": LEGACY, "factory_args": factory, "protocol": "2025-11-25"}
    return profile_from_mapping(raw, source="test")


@contextmanager
def _world(profile: Profile) -> Iterator[World]:
    with World(profile, Stats()) as world:
        yield world


def _controls(mechanism: str, flaws: tuple[str, ...] = ()) -> tuple[str, ControlOutcome]:
    """The controls of delete_file over the world's primary: the era it negotiated, what they found."""
    with _world(_profile(mechanism, flaws)) as world:
        primary = world.ensure(PRIMARY)
        assert world.sandbox is not None
        tools = world.call(primary.list_tools)
        seen = world.call(look_around, primary, tools, world.profile)
        plan = next(p for p in plan_tools(tools, world.profile, seen) if p.name == "delete_file")
        sandbox = world.sandbox
        outcome = world.call(
            lambda: run_controls(
                plan,
                primary,
                sandbox,
                world.profile.answer,
                world.profile.negative_answer,
                values=world.values,
                tools=tools,
                call_timeout=world.profile.call_timeout,
            )
        )
        return primary.era, outcome


def _passed(outcome: ControlOutcome) -> dict[str, bool]:
    return {result.name: result.passed for result in outcome.results if result.applicable}


@pytest.mark.parametrize("mechanism", list(SERVERS))
def test_the_honest_flow_approves_acts_and_every_other_answer_leaves_the_file(mechanism: str) -> None:
    era, outcome = _controls(mechanism)
    assert era == SERVERS[mechanism]
    passed = _passed(outcome)
    assert outcome.approve_ok, outcome.results[0].detail
    assert {"approve", "decline", "cancel"} <= passed.keys(), passed
    assert all(passed[name] for name in ("approve", "decline", "cancel")), outcome.results
    # The first call asked: no other mechanism was found in place of the question.
    assert outcome.mechanism is None


@pytest.mark.parametrize("mechanism", list(SERVERS))
def test_the_decline_control_fails_where_a_decline_proceeds(mechanism: str) -> None:
    _, outcome = _controls(mechanism, ("decline-as-accept",))
    passed = _passed(outcome)
    assert passed["approve"], outcome.results[0].detail
    assert passed["decline"] is False, outcome.results
