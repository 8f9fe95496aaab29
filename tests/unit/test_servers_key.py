"""`servers:` and `server:`: which server each step goes to, and the one-line errors."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.profile.loader import profile_from_mapping, resolve_profile

TWO = {"stage": "stage-server --root {root}", "post": "post-server --root {root}"}


def test_each_named_tool_goes_to_its_server_and_the_rest_to_the_first() -> None:
    profile = profile_from_mapping(
        {
            "servers": TWO,
            "tool": "stage_invoice",
            "setup": [{"tool": "open_batch", "server": "post", "save": {"batch": "batch_id"}}],
            "args": {"batch": "{batch}"},
            "effect": [{"tool": {"name": "list_posted", "args": {}}, "server": "post"}],
            "confirmation": {
                "kind": "pending",
                "pending": {"execute": {"tool": "post_invoice", "args": {"id": "{id}"}, "server": "post"}},
            },
        },
        source="p.yaml",
    )
    servers = profile.servers
    assert servers is not None
    assert profile.command == "stage-server --root {root}"  # the first server
    assert servers.names == ("stage", "post")
    assert [servers.server_of(t) for t in ("open_batch", "list_posted", "post_invoice")] == ["post"] * 3
    assert servers.server_of("stage_invoice") == "stage"
    # The steps themselves read as they do with one server.
    assert profile.setup[0].tool == "open_batch"
    assert profile.effect[0].name == "tool:list_posted"


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (
            {"servers": TWO, "tool": "t", "setup": [{"tool": "a", "server": "comit"}]},
            "setup step 1 names server 'comit', which is not one of servers: \\(stage, post\\)",
        ),
        ({"servers": TWO, "tool": "t", "server": "nope"}, "server names server 'nope'"),
        (
            {"command": "one --root {root}", "tool": "t", "server": "post"},
            "names a server, but the profile has no servers:",
        ),
        ({"servers": TWO, "command": "x {root}"}, "give servers: or command:, not both"),
        ({"servers": {}}, "'servers' must be a mapping of short names to command lines, got \\{\\}"),
        (
            {
                "servers": TWO,
                "tool": "t",
                "setup": [{"tool": "a", "server": "stage"}],
                "effect": [{"tool": "a", "server": "post"}],
            },
            "tool 'a' is named on servers 'stage' and 'post'",
        ),
    ],
)
def test_a_step_naming_an_unknown_or_second_server_is_one_clear_line(raw: dict[str, Any], says: str) -> None:
    with pytest.raises(UsageError, match=says) as caught:
        profile_from_mapping(raw, source="p.yaml")
    assert "\n" not in str(caught.value)


def _person(*steps: dict[str, Any], decline: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    pending: dict[str, Any] = {"human": list(steps), "execute": {"tool": "post", "args": {"id": "{id}"}}}
    if decline is not None:
        pending["decline"] = decline
    return {"kind": "pending", "pending": pending}


READ_CODE = {"read": {"from": "stderr", "pattern": r"code (\d+)"}, "save": "code", "server": "stage"}
SEND_CODE = {"http": {"url": "{url}/approvals/{id}", "json": {"code": "{code}"}}, "server": "post"}


def test_a_persons_step_keeps_the_server_it_names() -> None:
    served = {"stage": "stage-server --root {root}", "post": "post-server --root {root} --port {port}"}
    profile = profile_from_mapping(
        {"servers": served, "tool": "t", "confirmation": _person(READ_CODE, SEND_CODE)}, source="p.yaml"
    )
    person = getattr(profile.confirmation, "human", None)
    assert person is not None
    assert [getattr(step, "server", None) for step in person.approve] == ["stage", "post"]


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (
            {"servers": TWO, "tool": "t", "confirmation": _person({**READ_CODE, "server": "staging"})},
            r"confirmation pending.human\[1\] names server 'staging', which is not one of servers: \(stage, post\)",
        ),
        (
            {
                "servers": TWO,
                "tool": "t",
                "confirmation": _person(READ_CODE, decline=[{**READ_CODE, "server": "x"}]),
            },
            r"pending.decline\[1\] names server 'x'",
        ),
        (
            {"command": "one --root {root}", "tool": "t", "confirmation": _person(READ_CODE)},
            r"pending.human\[1\] names a server, but the profile has no servers:",
        ),
        (
            {
                "servers": TWO,
                "tool": "t",
                "confirmation": _person({"command": "approve {id}", "server": "post"}),
            },
            "a command step reaches no server of the target",
        ),
        (
            # {url} is the post server's, and this post server speaks stdio: it has no base URL.
            {"servers": TWO, "tool": "t", "confirmation": _person(READ_CODE, SEND_CODE)},
            "names {url}, the base URL of server 'post', which speaks stdio",
        ),
    ],
)
def test_a_persons_step_naming_a_server_it_cannot_reach_is_one_clear_line(
    raw: dict[str, Any], says: str
) -> None:
    with pytest.raises(UsageError, match=says) as caught:
        resolve_profile(profile_from_mapping(raw, source="p.yaml"), None, None)
    assert "\n" not in str(caught.value)
