"""The profile contract is declared once: the loader, the JSON Schema and docs/profile.md say the same."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from mcp_confirm_audit.cli.main import main
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.profile import docs
from mcp_confirm_audit.profile.keys import ProfileKeys
from mcp_confirm_audit.profile.loader import Profile, load_profile, profile_from_mapping
from mcp_confirm_audit.profile.yamlfile import load_text

ROOT = Path(__file__).parents[2]
SHIPPED = sorted((ROOT / "targets").glob("*.yaml"))


def _printed_schema(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    assert main(["schema", "profile"]) == 0
    printed: dict[str, object] = json.loads(capsys.readouterr().out)
    return printed


def _problem(**raw: object) -> str:
    with pytest.raises(UsageError) as caught:
        profile_from_mapping({"command": "srv --root {root}", **raw}, source="p.yaml")
    line = str(caught.value)
    assert "\n" not in line
    return line


def test_the_printed_schema_accepts_every_shipped_profile(capsys: pytest.CaptureFixture[str]) -> None:
    schema = _printed_schema(capsys)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    assert SHIPPED
    for path in SHIPPED:
        # As the loader reads it (YAML 1.2, as an editor does: a date is the text written).
        errors = [e.message for e in validator.iter_errors(load_text(path.read_text()))]
        assert errors == [], f"{path.name}: {errors}"


def test_the_printed_schema_refuses_what_the_loader_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    # A schema that accepts anything would pass the test above: these are each refused by both.
    validator = jsonschema.Draft202012Validator(_printed_schema(capsys))
    wrong: list[dict[str, object]] = [
        {"colour": "blue"},
        {"paths": "sideways"},
        {"call_timeout": -1},
        {"setup": [{"tool": "a", "save": {"1x": "id"}}]},
        {"effect": [{"printer": True}]},
        {"confirmation": {"kind": "sms"}},
        {"confirmation": {"kind": "token", "tokn": {}}},
        {"principals": {"two words": {"headers": {"A": "b"}}}},
    ]
    for raw in wrong:
        assert not validator.is_valid(raw), raw
        with pytest.raises(UsageError):
            profile_from_mapping(raw, source="p.yaml")


def test_every_shipped_profile_names_the_checked_in_schema_on_its_first_line() -> None:
    for path in SHIPPED:
        assert path.read_text().splitlines()[0] == docs.SCHEMA_LINE, path.name
    named = (ROOT / "targets" / docs.SCHEMA_LINE.split("$schema=")[1]).resolve()
    assert named == ROOT / "schemas" / "profile.schema.json"


def test_the_checked_in_schema_and_key_reference_are_not_stale() -> None:
    schema = (ROOT / "schemas" / "profile.schema.json").read_text(encoding="utf-8")
    assert schema == docs.schema_text(), f"schemas/profile.schema.json is stale: run `{docs.SCHEMA_COMMAND}`"
    reference = (ROOT / "docs" / "profile.md").read_text(encoding="utf-8")
    assert reference == docs.markdown(), f"docs/profile.md is stale: run `{docs.DOCS_COMMAND}`"


def test_the_key_reference_has_a_row_for_every_key_the_loader_takes() -> None:
    keys = {row[0] for row in docs.rows()}
    assert set(ProfileKeys.model_fields) <= keys
    assert {"setup[].save", "effect[].sqlite.query", "confirmation.token.from"} <= keys
    assert "confirmation.pending.human.http.headers" in keys


def test_the_models_defaults_are_the_profiles_defaults() -> None:
    # The reference's Default column is read off the models; the loader's output keeps the dataclass's.
    given = {info.alias or name: info.default for name, info in ProfileKeys.model_fields.items()}
    built = ProfileKeys.model_construct(_fields_set=set(given), **given).settings("defaults")
    assert Profile(source="defaults", **built) == Profile(source="defaults")


def test_a_wrong_value_names_the_key_what_was_found_and_the_accepted_form_with_an_example() -> None:
    assert _problem(paths="sideways") == (
        "profile p.yaml: 'paths' must be one of auto, relative, absolute, got sideways; e.g. paths: relative"
    )
    assert _problem(call_timeout="15") == (
        "profile p.yaml: 'call_timeout' must be a positive number of seconds, got '15'; e.g. call_timeout: 15"
    )
    assert _problem(setup=[{"tool": "a", "save": {"1x": "id"}}]) == (
        "profile p.yaml: setup[0]: 'save' must be a mapping of a NAME to a dotted field of the result, "
        "got {1x: id} (the name '1x' does not fit); e.g. save: {transfer: transfer_id}"
    )


def test_a_missing_key_of_a_group_says_what_it_takes() -> None:
    assert _problem(confirmation={"kind": "pending", "pending": {"execute": {"args": {}}}}) == (
        "profile p.yaml: confirmation.pending.execute needs 'tool', the name of a tool of the target; "
        "e.g. tool: execute_pending"
    )


@pytest.mark.parametrize(
    ("raw", "line"),
    [
        ({"tol": "delete_file"}, "unknown key 'tol'; did you mean 'tool'?"),
        ({"call_timout": 5}, "unknown key 'call_timout'; did you mean 'call_timeout'?"),
        (
            {"confirmation": {"kind": "token", "tokn": {}}},
            "confirmation: unknown key 'tokn'; did you mean 'token'? confirmation takes kind, preview",
        ),
        ({"setup": [{"tool": "a", "sav": {}}]}, "setup[0]: unknown key 'sav'; did you mean 'save'?"),
        # The typo is the news, not the key it meant that now looks missing.
        (
            {"principals": {"m": {"header": {}}}},
            "principals.m: unknown key 'header'; did you mean 'headers'?",
        ),
    ],
)
def test_an_unknown_key_suggests_the_nearest_known_one(raw: dict[str, object], line: str) -> None:
    assert line in _problem(**raw)


def test_an_unknown_key_far_from_any_lists_the_keys_and_where_else_to_go() -> None:
    line = _problem(effect=[{"printer": True}])
    assert "effect[0]: unknown key 'printer'; effect[0] takes tool, file, sqlite, sink" in line
    assert "did you mean" not in line
    assert "pytest_mcp_snapshot" in line


def test_a_credential_in_the_wrong_shape_is_never_echoed() -> None:
    line = _problem(headers={"Authorization": ["Bearer sk-live-123456"]})
    assert "sk-live" not in line
    assert "'headers' must be a mapping of header names to strings" in line
    assert "sk-live" not in _problem(env={"API_KEY": ["sk-live-123456"]})


def test_a_check_of_a_whole_group_is_one_line_with_its_example() -> None:
    assert _problem(effect=[{"file": "a.json", "sink": True}]) == (
        "profile p.yaml: effect[0] must have exactly one key, one of tool, file, sqlite, sink "
        "(it has file, sink); e.g. '- file: ledger.json' or '- tool: list_payments'"
    )
    assert "has 'flag', which is for kind flag, and kind is token" in _problem(
        confirmation={"kind": "token", "flag": {"arg": "ok"}}
    )


def test_every_shipped_profile_loads_into_the_same_specs_as_its_keys_say(tmp_path: Path) -> None:
    # Strict values: YAML's `15` is a number of seconds and stays one; nothing is coerced from text.
    profile = load_profile(ROOT / "targets" / "mcp-confirm.yaml")
    assert (profile.call_timeout, profile.replicas, profile.ttl_flag, profile.version) == (
        15.0,
        2,
        "--ttl-seconds {ttl}",
        "0.2.1",
    )
    path = tmp_path / "p.yaml"
    path.write_text("command: srv {root}\nversion: 0.2\n")
    with pytest.raises(UsageError, match=r"'version' must be a string \(quote a number\), got 0\.2"):
        load_profile(path)


def test_a_date_written_unquoted_is_the_text_written(tmp_path: Path) -> None:
    # YAML reads 2025-11-25 as a date; every key of ours that takes one takes a string, written unquoted.
    path = tmp_path / "p.yaml"
    path.write_text(
        "command: srv {root}\nprotocol: 2025-11-25\nversion: 2024-05-01\n"
        "env: {SINCE: 2024-01-02}\nargs: {day: 2026-07-28, note: '{since}'}\n"
        "setup: [{tool: plan, args: {at: 2026-01-01}, save: {since: day}}]\n"
    )
    profile = load_profile(path)
    assert (profile.protocol, profile.version, profile.env["SINCE"]) == (
        "2025-11-25",
        "2024-05-01",
        "2024-01-02",
    )
    assert profile.args == {"day": "2026-07-28", "note": "{since}"}
    assert profile.setup[0].args == {"at": "2026-01-01"}
