"""One attack's steps, driven in process: what it sent, in which phase, and what the verdict reads.

No session and no audit: the test opens the reference server in process through the session's
world (`engine/world.py`: the event loop, the sandbox, the primary connection by key), builds the
`Attack` the session would hand the technique, and runs `replay`'s steps itself: ask, accept and
redeem (setup), then `start_attack()` and the same state presented again (attack). The transcript's
exchanges are checked request by request, and the pure `judge` reads them both ways: the server
that never spends an approval lets the second redemption delete the file put back (vulnerable),
the careful one refuses it (refused by the tool), so the checks can fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcp_confirm_audit.catalogue.loader import load_catalogue
from mcp_confirm_audit.confirmations.mrtr import Mrtr
from mcp_confirm_audit.engine.connection_key import PRIMARY
from mcp_confirm_audit.engine.observation import Observer
from mcp_confirm_audit.engine.phases import PhaseClock
from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.engine.world import Stats, World
from mcp_confirm_audit.models import AttackSpec, Layer, Phase, Precondition, Transcript, Verdict
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target.discovery import look_around, plan_tools
from mcp_confirm_audit.target.driver import Connection
from mcp_confirm_audit.techniques.base import Attack
from mcp_confirm_audit.techniques.replay import replay

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"


@pytest.fixture(scope="module")
def after_success() -> AttackSpec:
    return next(spec for spec in load_catalogue().active if spec.id == "MCA-REPLAY-001")


@contextmanager
def _world(flaws: tuple[str, ...]) -> Iterator[World]:
    profile = Profile(
        command=f"py:{SERVER}:build_server",
        tool="delete_file",
        call_timeout=10.0,
        factory_args={"flaws": list(flaws)},
    )
    with World(profile, Stats()) as world:
        yield world


def _replayed(world: World, spec: AttackSpec) -> Transcript:
    """`replay`'s steps against the world's primary, as the session would drive them, bounded."""
    primary = world.ensure(PRIMARY)
    assert world.sandbox is not None
    tools = world.call(primary.list_tools)
    seen = world.call(look_around, primary, tools, world.profile)
    plan = next(p for p in plan_tools(tools, world.profile, seen) if p.name == "delete_file")
    plan = replace(plan, mechanism=Mrtr("delete_file"))

    async def no_other() -> Connection:
        raise AssertionError("replay opens no other connection")

    attack = Attack(
        spec,
        plan,
        "relative",
        world.sandbox,
        world.sandbox.reserve_case(f"{spec.id}-{spec.slug}"),
        primary,
        no_other,
        tools=tools,
        observer=Observer(tuple(plan.probes), world.sandbox.root, None, PhaseClock()),
        values=world.values,
    )

    async def steps() -> None:
        await attack.prepare()
        await replay(attack, spec.params)
        await attack.finish()

    world.call(steps)
    return attack.transcript(Precondition(True))


def _sent(transcript: Transcript) -> list[tuple[Phase, str, Any, Any]]:
    """Each exchange as (phase, label, the state presented, the person's answer)."""
    rows = []
    for exchange in transcript.exchanges:
        params = exchange.request.get("params", exchange.request)
        state = params.get("requestState") or params.get("request_state")
        answers = params.get("inputResponses") or params.get("input_responses")
        rows.append((exchange.phase, exchange.label, state, answers))
    return rows


@pytest.mark.parametrize(
    ("flaws", "verdict", "layer"),
    [(("no-ledger",), Verdict.VULNERABLE, Layer.NONE), ((), Verdict.REFUSED, Layer.TOOL)],
    ids=["never-spends", "careful"],
)
def test_replay_sends_the_spent_state_again_only_in_the_attack_phase(
    after_success: AttackSpec, flaws: tuple[str, ...], verdict: Verdict, layer: Layer
) -> None:
    with _world(flaws) as world:
        transcript = _replayed(world, after_success)

    rows = _sent(transcript)
    phases = [phase for phase, *_ in rows]
    # Setup first (the question, the honest redemption), then the attack: never the other way round.
    assert phases == sorted(phases, key=[Phase.SETUP, Phase.ATTACK].index), rows
    setup = [row for row in rows if row[0] is Phase.SETUP]
    attack = [row for row in rows if row[0] is Phase.ATTACK]
    assert setup[0][2] is None, "the first round presents no state: it is the question"
    honest = next(row for row in setup if row[1] == "honest redemption")
    assert honest[2], "the honest redemption presents the question's state"
    assert honest[3], "and the person's accept"
    again = next(row for row in attack if row[1].startswith("redeem the same state again"))
    # The very state the honest redemption spent, and the very same answer, presented again.
    assert (again[2], again[3]) == (honest[2], honest[3])
    # The snapshot start_attack took, and the one at the end: the effect is judged between them.
    assert transcript.before is not None
    assert transcript.after is not None

    result = judge(after_success, transcript)
    assert (result.verdict, result.layer) == (verdict, layer), result.reason
