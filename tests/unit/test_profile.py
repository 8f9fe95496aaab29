"""Bad input gets one line saying what is wrong and how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.profile import load_profile, resolve_profile


def test_a_command_without_a_root_placeholder_is_refused_with_the_fix(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no \{root\} placeholder.*--mcp-root-from cwd"):
        resolve_profile(None, "my-server", None)


def test_a_server_that_works_in_its_directory_needs_no_placeholder() -> None:
    assert resolve_profile(None, "my-server", "cwd").root_from == "cwd"


def test_the_root_placeholder_is_substituted(tmp_path: Path) -> None:
    profile = resolve_profile(None, "srv --root {root} --x", None)
    assert profile.argv(tmp_path) == ["srv", "--root", str(tmp_path), "--x"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("command: [a", "not valid YAML"),
        ("- a\n- b\n", "must be a mapping"),
        ("command: srv {root}\ncolour: blue\n", "unknown key 'colour'"),
        ("command: srv {root}\npaths: sideways\n", "'paths' must be one of"),
        ("command: srv {root}\ncall_timeout: -1\n", "positive number of seconds"),
    ],
)
def test_a_bad_profile_names_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        load_profile(path)


def test_a_missing_profile_says_so(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_profile(tmp_path / "nope.yaml")


def test_the_target_option_overrides_the_profile_command(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("command: old --root {root}\ntool: delete_file\n")
    profile = resolve_profile(load_profile(path), "new --root {root}", None)
    assert (profile.command, profile.tool) == ("new --root {root}", "delete_file")
