"""The bench's floor sends the audit's own requests again: moved to its root, grouped, files made inside only."""

from __future__ import annotations

from pathlib import Path

from mcp_confirm_audit.cli.bench import AuditCost, replayed
from mcp_confirm_audit.target.discovery import ToolPlan
from mcp_confirm_audit.target.driver import Sent

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
