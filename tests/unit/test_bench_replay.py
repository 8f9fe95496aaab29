"""The bench's floor sends the audit's own requests again: moved to its root, grouped, files made inside only."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from mcp_confirm_audit.cli.bench import AuditCost, Replayed, _declines, _resend, replayed
from mcp_confirm_audit.profile.loader import resolve_profile
from mcp_confirm_audit.target.discovery import ToolPlan
from mcp_confirm_audit.target.driver import Sent, _build_in_process

CAREFUL = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"

AUDIT = "/dev/shm/mcp-audit-abc"


def cost(*sent: Sent) -> AuditCost:
    plan = ToolPlan(name="delete_file", path_arg="path")
    return AuditCost(1.0, 1, 2, 0, 1, len(sent), plan, sent=sent, sandbox=AUDIT)


def call(process: int, started: float, ended: float, **request: object) -> Sent:
    return Sent(process, started, ended, {"method": "tools/call", "name": "delete_file", **request})


def test_requests_keep_their_order_server_and_overlap(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    groups = replayed(
        cost(
            call(7, 0.0, 1.0, arguments={"path": "001/victim.txt"}),
            # Two redemptions in flight together, the second on another process.
            call(7, 2.0, 4.0, arguments={"path": "002/victim.txt"}, requestState="s1"),
            call(9, 3.0, 3.5, arguments={"path": "002/victim.txt"}, requestState="s1"),
            call(7, 5.0, 6.0, arguments={"path": f"{AUDIT}/root/003/victim.txt"}),
        ),
        root,
        processes=2,
    )
    assert [[(c.server, c.state) for c in group] for group in groups] == [
        [(0, None)],
        [(0, "s1"), (1, "s1")],
        [(0, None)],
    ]
    # A path under the audit's sandbox is the same path under the floor's.
    assert groups[2][0].arguments == {"path": f"{tmp_path}/root/003/victim.txt"}
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.txt")) == [
        "001/victim.txt",
        "002/victim.txt",
        "003/victim.txt",
    ]


def test_one_server_takes_every_request_and_nothing_is_made_outside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    groups = replayed(
        cost(
            call(7, 0.0, 1.0, arguments={"path": "../outside.txt"}),
            call(9, 2.0, 3.0, arguments={"path": "/etc/passwd-bench"}),
            call(9, 4.0, 5.0, arguments={"path": "nul\x00byte"}),
        ),
        root,
        processes=1,
    )
    assert {c.server for group in groups for c in group} == {0}
    assert not (tmp_path / "outside.txt").exists()
    assert not Path("/etc/passwd-bench").exists()
    assert list(root.iterdir()) == []


def test_answers_and_hand_written_params_go_as_sent_and_legacy_calls_without_state(tmp_path: Path) -> None:
    answered = call(1, 0.0, 1.0, arguments={"path": "a"}, requestState="s", inputResponses={"q": {"x": 1}})
    odd = Sent(1, 2.0, 3.0, {"method": "tools/call", "name": "delete_file", "arguments": "not an object"})
    legacy = Sent(1, 4.0, 5.0, {**answered.request}, legacy=True)
    groups = replayed(cost(answered, odd, legacy), tmp_path, processes=1)
    first, second, third = (group[0] for group in groups)
    assert first.raw == {k: v for k, v in answered.request.items() if k != "method"}
    assert second.raw == {"name": "delete_file", "arguments": "not an object"}
    assert (third.raw, third.state, third.arguments) == (None, None, {"path": "a"})


def test_each_client_of_a_process_is_numbered_as_first_used(tmp_path: Path) -> None:
    # Process 7 had two clients (the primary, then another agent's session); process 9 one.
    sent = [
        Sent(7, 0.0, 1.0, {"name": "t", "arguments": {}}, client=70),
        Sent(7, 2.0, 3.0, {"name": "t", "arguments": {}}, client=71),
        Sent(9, 4.0, 5.0, {"name": "t", "arguments": {}}, client=90),
        Sent(7, 6.0, 7.0, {"name": "t", "arguments": {}}, client=70),
    ]
    groups = replayed(cost(*sent), tmp_path, processes=2)
    assert [(c.server, c.client) for group in groups for c in group] == [(0, 0), (0, 1), (1, 0), (0, 0)]


def test_the_audit_s_replies_keep_the_state_they_carried_for_the_floor(tmp_path: Path) -> None:
    asked = Sent(7, 0.0, 1.0, {"name": "delete_file", "arguments": {"path": "a"}}, state_back="sealed-1")
    legacy = Sent(
        7, 2.0, 3.0, {"name": "delete_file", "arguments": {"path": "a"}}, legacy=True, state_back="x"
    )
    first, second = (group[0] for group in replayed(cost(asked, legacy), tmp_path, processes=1))
    # On a handshake-era connection an answer is no tools/call: nothing of its state goes again.
    assert (first.state_back, second.state_back) == ("sealed-1", None)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_an_answer_goes_with_the_state_the_floor_s_own_server_sealed(tmp_path: Path) -> None:
    # The floor's server seals its states with a key of its own: the audit's state would be refused at
    # once, the approval never spent and the file never deleted (work the audit's server did).
    root = tmp_path / "root"
    root.mkdir()
    (root / "victim.txt").write_text("victim\n")
    answer = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    ask = Replayed(0, "delete_file", {"path": "victim.txt"}, state_back="sealed-by-the-audit-s-server")
    forged = {"name": "delete_file", "arguments": {"path": "victim.txt"}, "inputResponses": answer}
    states: dict[str, str] = {}
    server = _build_in_process(resolve_profile(None, f"py:{CAREFUL}:build_server", None), root)
    async with Client(server, elicitation_callback=_declines) as client:
        await _resend(client.session, ask, 10.0, states)
        # A state the audit's server never sent (a forged one) goes as it was: refused, nothing deleted.
        made_up = Replayed(0, "delete_file", {}, raw={**forged, "requestState": "made-up"})
        await _resend(client.session, made_up, 10.0, states)
        assert (root / "victim.txt").exists()
        answered = Replayed(
            0, "delete_file", {}, raw={**forged, "requestState": "sealed-by-the-audit-s-server"}
        )
        await _resend(client.session, answered, 10.0, states)
    assert list(states) == ["sealed-by-the-audit-s-server"]
    assert not (root / "victim.txt").exists()
