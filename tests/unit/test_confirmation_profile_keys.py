"""The profile's confirmation: and policy_tools: keys: the contract, and one line for each mistake."""

from __future__ import annotations

import pytest

from mcp_confirm_audit.confirmations.flag import Flag
from mcp_confirm_audit.confirmations.mrtr import Mrtr
from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.profile.loader import Profile, profile_from_mapping


def profile(**raw: object) -> Profile:
    return profile_from_mapping({"command": "srv --root {root}", **raw}, source="p.yaml")


def test_a_token_flow_as_the_issue_states_it() -> None:
    stated = profile(
        confirmation={
            "kind": "token",
            "preview": {"dry_run": True},
            "token": {"from": "confirm_token", "into": "confirm_token"},
        },
        policy_tools=["set_frame"],
    )
    assert stated.confirmation == Token(
        into="confirm_token", token_from="confirm_token", preview_args={"dry_run": True}, source="profile"
    )
    assert stated.policy_tools == ("set_frame",)
    # The confirming call turns the preview off and carries the token.
    assert stated.confirmation.confirming({"path": "a"}, "t0") == {
        "path": "a",
        "dry_run": False,
        "confirm_token": "t0",
    }


def test_a_pending_flow_with_a_human_channel_and_an_execute_step() -> None:
    stated = profile(
        confirmation={
            "kind": "pending",
            "pending": {
                "id_from": "staged_id",
                "human": {"command": "approve-cli {id} approved"},
                "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
            },
        }
    ).confirmation
    assert isinstance(stated, Pending)
    assert stated.human is not None
    assert stated.execute is not None
    assert stated.execute.filled("abc") == {"pending_id": "abc"}
    assert stated.for_tool("delete_file").tool == "delete_file"


def test_a_flag() -> None:
    assert profile(confirmation={"kind": "flag", "flag": {"arg": "human_approved"}}).confirmation == Flag(
        arg="human_approved", value=True, source="profile"
    )


@pytest.mark.parametrize(
    ("confirmation", "message"),
    [
        ("token", "must be a mapping with 'kind'"),
        ({"kind": "sms"}, "'kind' must be one of mrtr, token, pending, flag"),
        ({"kind": "token", "tokn": {}}, "unknown key 'tokn'"),
        ({"kind": "token", "token": {"form": "x"}}, "token: unknown key 'form'"),
        (
            {"kind": "pending", "pending": {"human": {"command": "approve-cli"}}},
            "with {id} where the pending id",
        ),
        (
            {"kind": "pending", "pending": {"approve": {"args": {}}}},
            "pending.approve needs 'tool', the name of a tool",
        ),
        ({"kind": "flag", "flag": {}}, "flag needs 'arg'"),
    ],
)
def test_each_mistake_is_one_line_naming_the_key(confirmation: object, message: str) -> None:
    with pytest.raises(UsageError, match=r"^profile p\.yaml: '?confirmation\b") as caught:
        profile(confirmation=confirmation)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_policy_tools_unset_is_not_an_empty_list() -> None:
    # Unset: found from the schemas; an empty list: none, policy-self-loosening is off.
    assert profile().policy_tools is None
    assert profile(policy_tools=[]).policy_tools == ()


def test_policy_tools_must_be_names() -> None:
    with pytest.raises(UsageError, match="'policy_tools' must be a list of tool names"):
        profile(policy_tools="set_frame")


def test_an_mrtr_question_approved_elsewhere_carries_the_persons_steps() -> None:
    stated = profile(
        confirmation={
            "kind": "mrtr",
            "mrtr": {
                "human": [
                    {"read": {"from": "sink", "json": "approve_url"}, "save": "link"},
                    {"follow": {"link": "link", "method": "POST"}},
                ]
            },
        }
    ).confirmation
    assert isinstance(stated, Mrtr)
    assert stated.human is not None
    assert [step.kind for step in stated.human.approve] == ["read", "follow"]
    assert "on a channel of their own" in stated.describe()
    # Without mrtr:, the question is answered in the client, as before.
    assert profile(confirmation={"kind": "mrtr"}).confirmation == Mrtr(source="profile")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"confirmation": {"kind": "mrtr", "mrtr": {"human": [{"command": "approve {id}"}]}}},
            "confirmation.mrtr.human[0] names {id}, which an MRTR question does not hand out",
        ),
        (
            {"confirmation": {"kind": "token", "mrtr": {"human": [{"command": "approve"}]}}},
            "has 'mrtr', which is for kind mrtr, and kind is token",
        ),
        (
            {"principals": {"laptop": {"steps": [{"command": "read-code {challenge}"}]}}},
            "principals.laptop.steps[0] names {challenge}, which pairing a second device does not hand out",
        ),
        ({"principals": {"laptop": {}}}, "needs headers: (an identity the target authenticates) or steps:"),
    ],
)
def test_steps_where_nothing_hands_out_an_id_say_so_in_one_line(raw: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        profile(**raw)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_second_paired_device_is_a_principal_of_a_stdio_target() -> None:
    stated = profile(
        principals={
            "laptop": {"steps": [{"read": {"from": "stderr", "pattern": r"code (\d{6})"}, "save": "code"}]}
        }
    )
    assert stated.principals == {}
    assert [step.kind for step in stated.principal_steps["laptop"]] == ["read"]


def test_a_pending_id_said_in_prose_is_read_by_id_pattern() -> None:
    stated = profile(
        confirmation={
            "kind": "pending",
            "pending": {"id_pattern": r"request (\S+?),", "human": {"command": "approve ok {id}"}},
        }
    ).confirmation
    assert isinstance(stated, Pending)
    assert stated.id_pattern is not None
    said = "APPROVAL REQUIRED - this did not run.\n(request 8sk_SXB6grg, expires in 1 minutes)"
    assert stated.id_pattern.search(said).group(1) == "8sk_SXB6grg"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("pending", "message"),
    [
        ({"id_pattern": "request \\S+"}, "has no group: put the id in one"),
        ({"id_pattern": "request ("}, "is not a regular expression"),
        (
            {"id_pattern": "r (\\S+)", "id_from": "request_id"},
            "has both id_from (a result field) and id_pattern",
        ),
    ],
)
def test_id_pattern_mistakes_are_one_line(pending: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError) as caught:
        profile(confirmation={"kind": "pending", "pending": pending})
    assert message in str(caught.value)
