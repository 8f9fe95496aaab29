"""Each placeholder is filled where the key reference's table says, and refused in one line where it is not."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from mcp_confirm_audit.channels.base import Where
from mcp_confirm_audit.channels.command import Command
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.profile import docs, placeholders
from mcp_confirm_audit.profile.loader import load_profile, profile_from_mapping, resolve_profile

PENDING_COMMAND = {
    "kind": "pending",
    "pending": {
        "human": [{"command": "approve {url} {id}"}],
        "execute": {"tool": "x", "args": {"r": "{id}"}},
    },
}


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        (
            {"command": "srv {root} --url {url}"},
            "command names {url}, which is not filled there ({url} is the",
        ),
        (
            {"command": "srv {root} --ttl {ttl}"},
            "command names {ttl}, which is not filled there ({ttl} goes in ttl_flag:",
        ),
        (
            {"command": "srv {root}", "env": {"PUBLIC": "http://127.0.0.1:{port}"}},
            "env.PUBLIC names {port}, which is not filled there ({port} is filled only for a target served over "
            "HTTP: put {port} in its command too); env.NAME takes {root}, {port}, {sink}, {profile_dir}",
        ),
        (
            {"command": "srv {root}", "files": {"a.txt": "{id}"}},
            "files.a.txt names {id}, which is not filled there",
        ),
        ({"command": "srv {root}", "ttl_flag": "--ttl {ttl} --at {path}"}, "ttl_flag names {path}"),
        (
            {"command": "srv {root}", "answer": {"folder": "{root}"}},
            "answer.folder names {root}, which is not filled there ({root} is the sandbox root, known where "
            "the target starts, to the action's args and the person's steps); answer takes {name}, {path}, "
            "{profile_dir}",
        ),
        (
            {"command": "srv {root}", "negative_answer": {"hook": "{sink}/h"}},
            "negative_answer.hook names {sink}, which is not filled there ({sink} is the loopback sink, known "
            "where the target starts and to the action's args); negative_answer takes {name}, {path}, "
            "{profile_dir}",
        ),
    ],
)
def test_one_of_the_harnesss_names_where_it_is_not_filled_is_refused_with_the_reason(
    raw: dict[str, object], line: str
) -> None:
    with pytest.raises(UsageError) as caught:
        profile_from_mapping(raw, source="p.yaml")
    assert line in str(caught.value)
    assert str(caught.value).startswith("profile p.yaml: ")


def test_a_name_that_is_none_of_the_harnesss_is_the_targets_own_text() -> None:
    profile = profile_from_mapping(
        {"command": "srv {root} --format {name}", "env": {"TEMPLATE": "Delete {file}?"}}, source="p.yaml"
    )
    assert profile.env["TEMPLATE"] == "Delete {file}?"


def test_env_takes_root_and_port_as_the_command_does() -> None:
    profile = profile_from_mapping(
        {
            "command": "srv --root {root} --port {port}",
            "env": {"HOME_DIR": "{root}/h", "URL": ":{port}", "S": "{sink}"},
        },
        source="p.yaml",
    )
    env = profile.env.at("/tmp/r", 9)
    assert (env["HOME_DIR"], env["URL"], env["S"]) == ("/tmp/r/h", ":9", "{sink}")


def test_profile_dir_is_spelled_out_in_every_string_quoted_in_a_command_line(tmp_path: Path) -> None:
    folder = tmp_path / "my profiles"
    folder.mkdir()
    path = folder / "p.yaml"
    path.write_text(
        "command: python {profile_dir}/srv.py --root {root}\n"
        "env: {CONF: '{profile_dir}/conf.toml'}\n"
        "files: {a.txt: 'see {profile_dir}'}\n"
        "args: {config: '{profile_dir}/c.json'}\n"
        "approver: {steps: [{sign: {command: 'python {profile_dir}/wallet.py {challenge}'}}]}\n"
    )
    here = str(folder.resolve())
    profile = load_profile(path)
    assert profile.command == f"python {shlex.quote(here)}/srv.py --root {{root}}"
    assert profile.env["CONF"] == f"{here}/conf.toml"
    assert profile.files["a.txt"] == f"see {here}"
    assert profile.args == {"config": f"{here}/c.json"}
    assert profile.approver is not None
    step = profile.approver.steps[0]
    assert isinstance(step, Command)
    assert step.line == f"python {shlex.quote(here)}/wallet.py {{challenge}}"


def test_url_in_a_persons_command_is_the_targets_base_url_and_refused_where_there_is_none() -> None:
    where = Where(root=Path("/r"), timeout=1, target_url="http://127.0.0.1:5", values={"id": "7"})
    assert Command("approve {url}/x {id} {root}").words(where)[1:] == ["http://127.0.0.1:5/x", "7", "/r"]
    stdio = profile_from_mapping({"command": "srv {root}", "confirmation": PENDING_COMMAND}, source="p.yaml")
    with pytest.raises(
        UsageError,
        match=r"the person's command step names \{url\}, the target's base URL, and this target speaks stdio",
    ):
        resolve_profile(stdio, None, None)
    served = profile_from_mapping(
        {"command": "srv {root} --port {port}", "confirmation": PENDING_COMMAND}, source="p.yaml"
    )
    resolve_profile(served, None, None)


def test_the_key_reference_has_one_table_of_every_placeholder() -> None:
    page = docs.markdown()
    assert "## Placeholders" in page
    for line in placeholders.table():
        assert line in page


def _strings(value: object, seen: set[int]) -> list[str]:
    """Every string reachable from a loaded profile: its fields, mappings, sequences and objects."""
    if isinstance(value, str):
        return [value]
    if id(value) in seen or value is None or isinstance(value, (bool, int, float, Path)):
        return []
    seen.add(id(value))
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k, seen) + _strings(v, seen)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [s for v in value for s in _strings(v, seen)]
    fields = getattr(value, "__dataclass_fields__", None) or getattr(type(value), "model_fields", None)
    if fields is not None:
        return [s for name in fields for s in _strings(getattr(value, name, None), seen)]
    return []


@pytest.mark.parametrize(
    "confirmation",
    [
        # the agent's own approve call (self-approval) and the executing call of a pending flow
        "{kind: pending, pending: {human: [{command: 'ok {id}'}],"
        " approve: {tool: approve, args: {pending_id: '{id}', by: '{profile_dir}/agent'}},"
        " execute: {tool: x, args: {r: '{id}', from: '{profile_dir}'}}}}",
        # a token handed out by another tool, its preview call's arguments, and into: as a mapping
        "{kind: token, token: {preview: {tool: simulate, args: {target: '{path}', conf: '{profile_dir}'}},"
        " into: {approval: '{token}', keyring: '{profile_dir}/keys'}}}",
    ],
    ids=["pending approve and execute", "token preview and into"],
)
def test_profile_dir_leaves_no_string_of_a_loaded_profile_unfilled_in_any_place(
    tmp_path: Path, confirmation: str
) -> None:
    # {profile_dir} is spelled out once, at load, in every string: a place the run fills later
    # ({id}, {token}) then sees the folder, never the placeholder. A walk over the whole loaded
    # profile proves it for the places no reference profile runs it in.
    folder = tmp_path / "profiles"
    folder.mkdir()
    path = folder / "p.yaml"
    path.write_text(
        "command: python {profile_dir}/srv.py --root {root}\n"
        "tool: delete_file\n"
        "args: {path: '{path}', conf: '{profile_dir}'}\n"
        f"confirmation: {confirmation}\n"
    )
    profile = load_profile(path)
    strings = _strings(profile, set())
    here = str(folder.resolve())
    assert not [s for s in strings if "{profile_dir}" in s]
    assert sum(here in s for s in strings) >= 4, strings


def _changeset(preview_args: dict[str, str]) -> dict[str, object]:
    """mcp-changeset's flow: the preview hands out a change id beside the token, and into: carries both."""
    token = {
        "preview": {"tool": "preview_label", "args": preview_args},
        "from": "confirmation_token",
        "into": {"change_id": "{preview.change_id}", "confirmation_token": "{token}"},
    }
    return {"kind": "token", "token": token}


WHERE_PREVIEW_IS_FILLED = (
    "which is not filled there: a field of the preview's reply is filled only in confirmation.token.into, "
    "a mapping of the confirming call's arguments (into: {change_id: '{preview.change_id}', "
    "confirmation_token: '{token}'})"
)


@pytest.mark.parametrize(
    ("raw", "address", "named"),
    [
        # The action's own arguments: sent before any preview, braces and all.
        ({"args": {"change_id": "{preview.change_id}"}}, "args.change_id", "{preview.change_id}"),
        (
            {
                "setup": [
                    {"tool": "stage", "args": {"n": "x"}},
                    {"tool": "tag", "args": {"id": "{preview.id}"}},
                ]
            },
            "setup[1].args.id",
            "{preview.id}",
        ),
        # The preview's own call has no reply of its own to read.
        (
            {"confirmation": _changeset({"bed": "north", "label": "{preview.summary}"})},
            "confirmation.token.preview.args.label",
            "{preview.summary}",
        ),
        # A person's step: what they run is never filled from the reply the agent got.
        (
            {
                "confirmation": {
                    "kind": "pending",
                    "pending": {"human": [{"command": "ok {id} {preview.x.y}"}]},
                }
            },
            "confirmation.pending.human[0].command",
            "{preview.x.y}",
        ),
        # into: as one argument's name is not a mapping of what each argument carries.
        (
            {"confirmation": {"kind": "token", "token": {"into": "{preview.change_id}"}}},
            "confirmation.token.into",
            "{preview.change_id}",
        ),
    ],
    ids=["args", "setup", "the preview's own args", "a person's step", "into as a name"],
)
def test_a_preview_field_anywhere_but_a_token_flows_into_mapping_is_refused_saying_where_it_is_filled(
    raw: dict[str, object], address: str, named: str
) -> None:
    with pytest.raises(UsageError) as refused:
        profile_from_mapping({"command": "srv {root}", "tool": "apply_change", **raw}, source="p.yaml")
    assert str(refused.value) == f"profile p.yaml: {address} names {named}, {WHERE_PREVIEW_IS_FILLED}"


def test_a_preview_field_in_a_token_flows_into_mapping_loads() -> None:
    changeset = _changeset({"bed": "north", "label": "tomatoes"})
    profile = profile_from_mapping(
        {"command": "srv {root}", "tool": "apply_change", "confirmation": changeset}, source="p.yaml"
    )
    assert profile.confirmation is not None
