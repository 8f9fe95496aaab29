"""Every check of `confirmation:` and of the person's steps is the models': no hand check is left.

For each former hand check, the line the loader prints is asserted whole, and the model refuses the
same value on its own (`ConfirmationKeys.model_validate`, no loader, no builder); where the check
is one of shape (a type, an unknown key, a missing key) the generated JSON Schema refuses it too.
Then the builders are shown to take the models as they are: every kind of step, built.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import jsonschema
import pydantic
import pytest

from mcp_confirm_audit.channels.base import Save, kinds
from mcp_confirm_audit.channels.command import Command
from mcp_confirm_audit.channels.http import HttpCall
from mcp_confirm_audit.channels.read import Read
from mcp_confirm_audit.channels.terminal import Answer
from mcp_confirm_audit.confirmations.base import Preview
from mcp_confirm_audit.confirmations.pending import Pending, handed
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.models import Outcome, Response
from mcp_confirm_audit.profile import docs
from mcp_confirm_audit.profile.confirmation_keys import ConfirmationKeys
from mcp_confirm_audit.profile.loader import profile_from_mapping

HEAD = "profile p.yaml: "


def _line(confirmation: dict[str, Any]) -> str:
    with pytest.raises(UsageError) as caught:
        profile_from_mapping({"command": "srv {root}", "confirmation": confirmation}, source="p.yaml")
    return str(caught.value)


def _steps(steps: list[Any]) -> dict[str, Any]:
    return {"kind": "pending", "pending": {"human": steps}}


@pytest.fixture(scope="module")
def schema() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(docs.schema())


# (the confirmation, the whole line the user reads after `profile p.yaml: `)
SHAPE = {
    "a wrong type in a kind": (
        {"kind": "flag", "flag": {"arg": 5}},
        "confirmation.flag: 'arg' must be an argument name, got 5; e.g. arg: human_approved",
    ),
    "a wrong type in a step": (
        _steps([{"command": "approve {id}", "shows": "yes"}]),
        "confirmation.pending.human[0]: 'shows' must be true or false, got 'yes'; e.g. shows: true",
    ),
    "a step that is no mapping": (
        _steps([3]),
        "confirmation.pending.human[0] must be a step, a mapping such as {command: ...} or {read: ...}, "
        "got 3; e.g. {command: 'approve-cli {id}'} or {read: {from: stderr, pattern: 'code (\\d+)'}, save: code}",
    ),
    "an unknown key in a kind": (
        {"kind": "pending", "pending": {"id_frm": "pending_id"}},
        "confirmation.pending: unknown key 'id_frm'; did you mean 'id_from'? "
        "confirmation.pending takes id_from, id_pattern, approve, human, decline, execute",
    ),
    "an unknown key in a step": (
        {"kind": "waits", "waits": {"human": [{"terminal": {"expect": "allow", "answr": "y"}}]}},
        "confirmation.waits.human[0].terminal: unknown key 'answr'; did you mean 'answer'? "
        "confirmation.waits.human[0].terminal takes expect, answer",
    ),
    "a kind of step misspelt": (
        _steps([{"comand": "approve {id}"}]),
        "confirmation.pending.human[0] must name one kind of step (command, follow, http, read, sign, "
        "terminal); it names none (unknown key 'comand'; did you mean 'command'?); e.g. "
        "{command: 'approve-cli {id}'} or {read: {from: stderr, pattern: 'code (\\d+)'}, save: code}",
    ),
    "two kinds in one step": (
        _steps([{"command": "a {id}", "follow": "link"}]),
        "confirmation.pending.human[0] must name one kind of step (command, follow, http, read, sign, "
        "terminal); it names command and follow; e.g. "
        "{command: 'approve-cli {id}'} or {read: {from: stderr, pattern: 'code (\\d+)'}, save: code}",
    ),
    "a missing key in a kind": (
        {"kind": "flag", "flag": {"value": True}},
        "confirmation.flag needs 'arg', an argument name; e.g. arg: human_approved",
    ),
    "a missing key in a step": (
        _steps([{"read": {"pattern": "code (\\d+)"}, "save": "code"}]),
        "confirmation.pending.human[0].read needs 'from', sink, stderr or stdout, or 'file:PATH' "
        "(a relative path under the root); e.g. from: stderr",
    ),
    "a missing list of steps": (
        {"kind": "waits", "waits": {"decline": [{"terminal": {"expect": "allow", "answer": "n"}}]}},
        "confirmation.waits needs 'human', a list of one or more of the person's steps, e.g. "
        "[{command: 'approve-cli {id}'}] or [{read: {from: sink, json: approve_url}, save: link}, "
        "{follow: {link: link}}]; e.g. human: [{terminal: {expect: 'allow\\? \\[y/N\\]', answer: y}}]",
    ),
}

# Checks the JSON Schema cannot say (a regular expression, a loopback URL, names saved before).
MEANING = {
    "a kind without its keys": (
        {"kind": "waits"},
        "confirmation of kind waits needs 'waits' with 'human', the steps the person takes while the "
        "call waits, e.g. waits: {human: [{terminal: {expect: 'allow\\? \\[y/N\\]', answer: y}}]}",
    ),
    "a name no step before saves": (
        {
            "kind": "token",
            "token": {"human": [{"sign": "s {challenge}"}, {"command": "x {evidence} {nope}"}]},
        },
        "confirmation.token.human[1] names {nope}, which no step before it saves; "
        "known: {root}, {url}, {id}, {challenge}, {token}, {evidence}",
    ),
    "a decline list beside the old single step": (
        {"kind": "pending", "pending": {"human": {"command": "a {id}"}, "decline": [{"command": "d {id}"}]}},
        "confirmation.pending.decline goes with a list of human: steps; with the old human: {command: ...}, "
        "give human.decline",
    ),
    "a read that saves nothing": (
        _steps([{"read": {"from": "stderr", "pattern": "code"}}]),
        "confirmation.pending.human[0] saves nothing: add save: NAME, so a later step or the agent's call "
        "can use what was read",
    ),
    "a pattern that is no regular expression": (
        _steps([{"terminal": {"expect": "(", "answer": "y"}}]),
        "confirmation.pending.human[0].terminal: 'expect' must be a regular expression, got ( ('(' is not "
        "a regular expression: missing ), unterminated subpattern at position 0); e.g. expect: allow\\? \\[y/N\\]",
    ),
    "a URL off this machine": (
        _steps([{"http": {"url": "http://10.0.0.1/approve"}}]),
        "confirmation.pending.human[0].http: 'url' must be a URL starting with {url}, or a loopback URL, got "
        "http://10.0.0.1/approve (the url 'http://10.0.0.1/approve' is not on loopback (127.0.0.1, ::1, "
        "localhost): the harness sends requests to this machine only); e.g. url: '{url}/approvals/{id}'",
    ),
}


@pytest.mark.parametrize(("confirmation", "line"), SHAPE.values(), ids=SHAPE.keys())
def test_a_wrong_shape_is_refused_by_the_model_the_loader_and_the_schema_alike(
    confirmation: dict[str, Any], line: str, schema: jsonschema.Draft202012Validator
) -> None:
    assert _line(confirmation) == HEAD + line
    with pytest.raises(pydantic.ValidationError):
        ConfirmationKeys.model_validate(confirmation)
    assert not schema.is_valid({"confirmation": confirmation})


@pytest.mark.parametrize(("confirmation", "line"), MEANING.values(), ids=MEANING.keys())
def test_a_check_beyond_the_shape_is_the_models_own(confirmation: dict[str, Any], line: str) -> None:
    assert _line(confirmation) == HEAD + line
    with pytest.raises(pydantic.ValidationError):
        ConfirmationKeys.model_validate(confirmation)


def test_every_kind_of_step_is_built_from_its_model_as_the_profile_says_it() -> None:
    said = _steps(
        [
            {"read": {"from": "stderr", "pattern": "code (\\d+)", "containing": "{id}"}, "save": "code"},
            {"command": "device card {code} {id}", "shows": True},
            {"sign": "signer {challenge}"},
            {"http": {"url": "{url}/approvals/{id}", "method": "put", "json": {"code": "{code}"}}},
            {"read": {"from": "sink", "json": "links.approve"}, "save": {"link": "links.approve"}},
            {"follow": "link"},
            {"follow": {"link": "link", "method": "POST"}, "save": "done"},
            {"terminal": {"expect": "allow\\?", "answer": True}},
            "approve-cli {id} {done} {evidence}",
        ]
    )
    stated = ConfirmationKeys.model_validate(said).mechanism("p.yaml")
    assert isinstance(stated, Pending)
    assert stated.human is not None
    assert stated.human.approve == (
        Read("stderr", re.compile("code (\\d+)"), None, "{id}", Save(whole="code")),
        Command("device card {code} {id}", shows=True),
        Command("signer {challenge}", save=Save(whole="evidence"), kind="sign"),
        HttpCall("{url}/approvals/{id}", "PUT", {"code": "{code}"}),
        Read("sink", None, "links.approve", None, Save(fields={"link": "links.approve"})),
        HttpCall("", "GET", link="link"),
        HttpCall("", "POST", save=Save(whole="done"), link="link"),
        Answer(re.compile("allow\\?"), "y"),
        Command("approve-cli {id} {done} {evidence}"),
    )


def test_every_kind_of_step_found_in_the_folder_is_in_the_schema_and_the_key_table() -> None:
    # A new kind is a module of channels/ with its model: nothing else lists it.
    assert set(kinds()) == {"command", "follow", "http", "read", "sign", "terminal"}
    listed = {row[0] for row in docs.rows()}
    # Listed under the first list of steps the table meets (a second device's), the others point there.
    steps = "principals.NAME.steps[]"
    assert {f"{steps}.{kind}" for kind in kinds()} | {f"{steps}.save"} <= listed
    # Listed once: the other lists of steps point there rather than repeat every key.
    assert not any(address.startswith("confirmation.waits.human[]") for address in listed)
    waits = next(row for row in docs.rows() if row[0] == "confirmation.waits.human")
    assert f"see `{steps}`" in waits[3]
    definitions = docs.schema()["$defs"]
    assert {"CommandStep", "FollowStep", "HttpStep", "ReadStep", "SignStep", "TerminalStep"} <= set(
        definitions
    )


def test_an_execute_argument_names_what_the_person_saved_or_setup_saved_and_the_action_carries() -> None:
    pending = {
        "kind": "pending",
        "pending": {
            "human": [{"command": "approve {id}", "save": "evidence"}],
            "execute": {"tool": "confirm", "args": {"evidence": "{evidence}", "ticket": "{ticket}"}},
        },
    }
    assert _line(pending) == HEAD + (
        "confirmation.pending.execute.args.ticket names {ticket}, which no step before it saves; known: {id}, "
        "{evidence} (a name saved by setup: is known here when the action's args: carry it whole, e.g. "
        "args: {ticket_id: '{ticket}'})"
    )
    setup = [{"tool": "open_ticket", "save": {"ticket": "ticket_id"}}]
    profile = profile_from_mapping(
        {"command": "srv {root}", "setup": setup, "args": {"ticket_id": "{ticket}"}, "confirmation": pending},
        source="p.yaml",
    )
    assert isinstance(profile.confirmation, Pending)
    assert profile.confirmation.execute is not None
    sent = profile.confirmation.execute.filled("r1", {"evidence": "ev"}, {"ticket_id": "T-7"})
    assert sent == {"evidence": "ev", "ticket": "T-7"}


def test_a_token_flow_with_two_fields_fills_each_and_leaves_out_what_the_agent_lacks() -> None:
    token = {
        "kind": "token",
        "token": {
            "from": "challenge",
            "into": {"challenge": "{challenge}", "approval": "{signature}"},
            "human": [{"sign": {"command": "sign {challenge}"}, "save": {"signature": "signature"}}],
        },
    }
    profile = profile_from_mapping({"command": "srv {root}", "confirmation": token}, source="p.yaml")
    flow = profile.confirmation
    assert isinstance(flow, Token)
    assert flow.carries == ("challenge", "approval")
    assert flow.redeeming({"path": "a"}, "C", {"signature": "S"}) == {
        "path": "a",
        "challenge": "C",
        "approval": "S",
    }
    # The agent alone has the challenge, not the owner's signature: that field is left out.
    assert flow.confirming({"path": "a"}, "C") == {"path": "a", "challenge": "C"}
    token["token"]["into"] = {"challenge": "{challenge}", "approval": "{sig}"}  # type: ignore[index]
    assert _line(token) == HEAD + (
        "confirmation.token.into names {sig}, which no step before it saves; known: {challenge}, {token}, "
        "{id}, {signature}; a field the preview's reply returned is written {preview.sig}"
    )


def _changeset(into: dict[str, str]) -> dict[str, Any]:
    """mcp-changeset's shape: a preview tool hands out a change id beside the token; the confirming call takes both."""
    preview = {"tool": "preview_label", "args": {"bed": "north", "label": "tomatoes"}}
    return {"kind": "token", "token": {"preview": preview, "from": "confirmation_token", "into": into}}


@pytest.mark.parametrize(
    ("into", "line"),
    [
        # A bare name is what the person's steps saved, and none saved it: the form of a preview's field is said.
        (
            {"change_id": "{change_id}", "confirmation_token": "{token}"},
            "confirmation.token.into names {change_id}, which no step before it saves; known: {challenge}, "
            "{token}, {id}; a field the preview's reply returned is written {preview.change_id}",
        ),
        (
            {"change_id": "{preview}", "confirmation_token": "{token}"},
            "confirmation.token.into names {preview}, which is no field of the preview's reply: write "
            "{preview.NAME}, NAME a field (or dotted path) of it, e.g. {preview.change_id}",
        ),
        (
            {"change_id": "{preview.}", "confirmation_token": "{token}"},
            "confirmation.token.into names {preview.}, which is no field of the preview's reply: write "
            "{preview.NAME}, NAME a field (or dotted path) of it, e.g. {preview.change_id}",
        ),
    ],
    ids=["a bare name", "no field", "an empty field"],
)
def test_a_token_field_that_names_no_saved_name_nor_a_preview_field_is_one_line_saying_how(
    into: dict[str, str], line: str
) -> None:
    assert _line(_changeset(into)) == HEAD + line
    with pytest.raises(pydantic.ValidationError):
        ConfirmationKeys.model_validate(_changeset(into))


class _Previews:
    """A channel whose every call answers as mcp-changeset's preview does: a change id beside the token."""

    def __init__(self) -> None:
        self.previews = 0

    async def call(self, label: str, tool: str, arguments: Any, *, unanswered: bool = False) -> Response:
        self.previews += 1
        said = {"change_id": f"chg_{self.previews}", "confirmation_token": f"tok_{self.previews}"}
        return Response(Outcome.COMPLETE, json.dumps({"status": "preview", "staged": said}))


def _preview(flow: Token, channel: _Previews, arguments: dict[str, Any]) -> Preview:
    return asyncio.run(flow.preview(channel, arguments))  # type: ignore[arg-type]


def test_a_token_field_may_name_a_field_of_the_preview_reply_of_the_same_use() -> None:
    into = {"change_id": "{preview.staged.change_id}", "confirmation_token": "{token}"}
    profile = profile_from_mapping(
        {"command": "srv {root}", "confirmation": _changeset(into)}, source="p.yaml"
    )
    flow = profile.confirmation
    assert isinstance(flow, Token)
    channel = _Previews()
    victim, other = {"note": "victim"}, {"note": "other"}
    first = _preview(flow, channel, victim)
    assert (first.handle, first.missing) == ("tok_1", None)
    # Its own token: its own preview's change id, read by the dotted path.
    confirmed = {"note": "victim", "change_id": "chg_1", "confirmation_token": "tok_1"}
    assert flow.confirming(victim, "tok_1") == confirmed
    _preview(flow, channel, other)
    # Another action's token presented for the victim: the victim's preview's change id goes with it.
    assert flow.confirming(victim, "tok_2")["change_id"] == "chg_1"
    # A use never previewed has no reply to name: the field is left out, never filled with anything else.
    never = {"note": "never", "change_id": "made-up"}
    assert flow.confirming(never, "forged") == {"note": "never", "confirmation_token": "forged"}


def test_a_preview_reply_without_the_field_a_token_field_names_says_which_fields_it_has() -> None:
    into = {"change_id": "{preview.chnage_id}", "confirmation_token": "{token}"}
    profile = profile_from_mapping(
        {"command": "srv {root}", "confirmation": _changeset(into)}, source="p.yaml"
    )
    assert isinstance(profile.confirmation, Token)
    read = _preview(profile.confirmation, _Previews(), {"note": "victim"})
    assert read.missing == (
        "the preview's reply has no field 'chnage_id', which into.change_id names as {preview.chnage_id} "
        "(its fields: change_id, confirmation_token, status); name one of them in confirmation.token.into"
    )


def test_a_pending_flows_sign_step_may_sign_the_pending_id() -> None:
    pending = {
        "kind": "pending",
        "pending": {"human": [{"sign": "wallet sign {id}"}], "execute": {"tool": "x"}},
    }
    profile = profile_from_mapping({"command": "srv {root}", "confirmation": pending}, source="p.yaml")
    assert isinstance(profile.confirmation, Pending)
    assert handed("r1") == {"id": "r1", "challenge": "r1", "token": "r1"}


def test_a_command_steps_credentials_are_names_its_line_says() -> None:
    steps = [{"read": {"from": "stderr", "pattern": "code (\\d+)"}, "save": "code"}]
    line = _line(_steps([*steps, {"command": "device confirm {id}", "credentials": ["code"]}]))
    assert "names credential 'code', which its command line does not say as {code}" in line
    said = _steps([*steps, {"command": "device confirm {code} {id}", "credentials": ["code"]}])
    profile = profile_from_mapping({"command": "srv {root}", "confirmation": said}, source="p.yaml")
    assert isinstance(profile.confirmation, Pending)
    assert profile.confirmation.human is not None
    step = profile.confirmation.human.approve[1]
    assert isinstance(step, Command)
    assert step.credentials == ("code",)
