"""The profile's env: `${NAME}` filled in as in headers:, and values marked secret never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.models import ControlResult
from mcp_confirm_audit.profile.environment import parse_env
from mcp_confirm_audit.profile.headers import scrub_all
from mcp_confirm_audit.profile.loader import load_profile

ENVIRON = {"API_TOKEN": "tok-0123456789abcdef", "REGION": "eu-west-1"}


def test_a_variable_is_filled_in_from_the_environment_as_a_header_is() -> None:
    env = parse_env(
        {"REGION": "${REGION}", "URL": "https://${REGION}.example", "N": 3}, source="p", environ=ENVIRON
    )
    assert dict(env) == {"REGION": "eu-west-1", "URL": "https://eu-west-1.example", "N": "3"}
    assert env.secrets == ()


def test_a_value_marked_secret_is_a_secret_of_the_profile_and_never_in_its_repr(tmp_path: Path) -> None:
    profile_file = tmp_path / "p.yaml"
    profile_file.write_text(
        "command: server --root {root} --api-token tok-0123456789abcdef\n"
        'env: {API_TOKEN: {value: "${API_TOKEN}", secret: true}, REGION: eu}\n'
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("API_TOKEN", ENVIRON["API_TOKEN"])
        profile = load_profile(profile_file)
    assert profile.env["API_TOKEN"] == ENVIRON["API_TOKEN"]
    assert ENVIRON["API_TOKEN"] in profile.secrets()
    assert ENVIRON["API_TOKEN"] not in repr(profile.env)
    # Wherever it appears: the command line a report shows, a control's evidence.
    said = ControlResult("delete_file", "approve", True, True, "asked", evidence=(profile.command,))
    scrubbed = scrub_all({"command": profile.command, "controls": (said,)}, profile.secrets())
    assert scrubbed["command"] == "server --root {root} --api-token ***"
    assert scrubbed["controls"][0].evidence == ("server --root {root} --api-token ***",)


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"A": "${NOT_SET_ANYWHERE}"},
            "env A names ${NOT_SET_ANYWHERE}, which is not set in the environment",
        ),
        (
            {"A": {"value": "x", "secret": "yes"}},
            "env A must be a string or {value: '${TOKEN}', secret: true}",
        ),
        ({"A": {"secret": True}}, "env A must be a string or {value: '${TOKEN}', secret: true}"),
        ({"A": ["x"]}, "env A must be a string or {value: '${TOKEN}', secret: true}"),
        (["A=x"], "'env' must be a mapping of names to strings, or to {value: '${TOKEN}', secret: true}"),
    ],
)
def test_a_bad_env_is_one_line_naming_the_accepted_form(env: object, said: str) -> None:
    with pytest.raises(UsageError, match=None) as raised:
        parse_env(env, source="p.yaml", environ=ENVIRON)
    assert said in str(raised.value)
    assert "\n" not in str(raised.value)
