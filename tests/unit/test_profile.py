"""Bad input gets one line saying what is wrong and how to fix it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from mcp_confirm_audit.channels.human import Command
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.profile.loader import Profile, beside_interpreter, load_profile, resolve_profile


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
        # The action's keys: one line each, saying what the key takes.
        ("command: srv {root}\nsetup: {tool: a}\n", "'setup' must be a list of calls"),
        (
            "command: srv {root}\nsetup: [{args: {}}]\n",
            r"setup\[0\] needs 'tool', a tool's name; e.g. tool: ",
        ),
        (
            "command: srv {root}\nsetup: [{tool: a, keep: x}]\n",
            r"setup\[0\]: unknown key 'keep'; setup\[0\] takes tool, args, save",
        ),
        (
            "command: srv {root}\nsetup: [{tool: a, save: {1x: id}}]\n",
            "'save' must be a mapping of a NAME to a dotted field",
        ),
        ("command: srv {root}\nargs: [a]\n", "'args' must be a mapping"),
        ("command: srv {root}\nfiles: {../x: y}\n", "is not a path inside the root"),
        ("command: srv {root}\nisolation: thread\n", "'isolation' must be one of run, process"),
        ("command: srv {root}\neffect: [{printer: true}]\n", "effect"),
        # A placeholder nothing fills would be sent as it is written.
        ("command: srv {root}\nargs: {id: '{tokk}'}\n", r"args names \{tokk\}, which nothing provides"),
        (
            "command: srv {root}\nsetup: [{tool: a, save: {token: t}}]\nargs: {t: '{tokn}'}\n",
            "earlier setup calls save token",
        ),
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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("replicas: 0", "'replicas' must be a whole number from 1 to 64"),
        ("redemptions: 1", "'redemptions' must be a whole number from 2 to 64"),
        ("shared_key_env: 'not a name'", "'shared_key_env' must be an environment variable name"),
        ("ttl_flag: --ttl-seconds 1", r"with \{ttl\} for the seconds"),
        ("ttl: 0", "positive number of seconds"),
        ("url: http://127.0.0.1/mcp", r"with \{port\} in it"),
        ("ablation: sometimes", "'ablation' must be true or false"),
    ],
)
def test_bad_topology_settings_name_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(f"command: srv --root {{root}}\n{text}\n")
    with pytest.raises(UsageError, match=message):
        load_profile(path)


def test_a_command_with_a_port_is_served_over_http_on_that_port(tmp_path: Path) -> None:
    profile = resolve_profile(None, "srv --root {root} --port {port}", None)
    assert (profile.serves_http, profile.transport) == (True, "http")
    assert profile.argv(tmp_path, 8123) == ["srv", "--root", str(tmp_path), "--port", "8123"]
    assert resolve_profile(None, "srv --root {root}", None).transport == "stdio"
    assert resolve_profile(None, "py:pkg.mod:factory", None).transport == "in-process"


def test_the_ttl_flag_is_added_to_a_command_and_given_to_a_factory_as_a_keyword() -> None:
    command = Profile(command="srv --root {root}", ttl_flag="--ttl-seconds {ttl}", ttl=1.0)
    assert command.with_ttl().command == "srv --root {root} --ttl-seconds 1"
    factory = Profile(command="py:m:f", ttl_flag="ttl_seconds={ttl}", ttl=0.5, factory_args={"flaws": []})
    assert factory.with_ttl().factory_args == {"flaws": [], "ttl_seconds": 0.5}


def test_a_url_target_needs_the_directory_it_serves(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--mcp-root DIR"):
        resolve_profile(None, "http://127.0.0.1:8000/mcp", None)
    served = resolve_profile(Profile(root=str(tmp_path)), "http://127.0.0.1:8000/mcp", None)
    assert served.transport == "http"
    with pytest.raises(UsageError, match="not a directory"):
        resolve_profile(Profile(root=str(tmp_path / "nope")), "http://127.0.0.1:8000/mcp", None)


@pytest.mark.parametrize(
    ("profile", "message"),
    [
        (Profile(command="py:m:f", shared_key_env="KEY"), "an in-process factory chooses its own keys"),
        (Profile(command="py:m:f", ttl_flag="--ttl {ttl}"), "ttl_flag names a keyword"),
        (Profile(command="srv {root}", factory_args={"x": 1}), "only for an in-process target"),
        (Profile(command="srv {root}", root="/tmp"), "only for a URL target"),
    ],
)
def test_settings_a_kind_of_target_cannot_use_are_usage_errors(profile: Profile, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        resolve_profile(profile, None, None)


SHIPPED = sorted((Path(__file__).parents[2] / "targets").glob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_profile_loads_and_resolves(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A credential a profile reads from the environment (${ALICE_TOKEN}) is the user's to export.
    for name in re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", path.read_text()):
        monkeypatch.setenv(name, f"exported-{name.lower()}")
    profile = resolve_profile(load_profile(path), None, None)
    assert "{profile_dir}" not in profile.command


def test_a_profile_names_a_script_beside_it_with_profile_dir(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("command: python {profile_dir}/server.py --root {root}\n")
    assert load_profile(path).argv(Path("/r")) == [sys.executable, f"{tmp_path}/server.py", "--root", "/r"]


def test_a_bare_program_is_the_one_beside_the_running_interpreter_even_without_an_activated_venv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `.venv/bin/python -m pytest` with the venv not on PATH: its python and
    # its scripts are still the ones a profile's command means.
    monkeypatch.setenv("PATH", str(tmp_path))
    assert beside_interpreter("python") == sys.executable
    beside = Path(sys.executable).parent / "mcp-confirm-audit"
    assert beside_interpreter("mcp-confirm-audit") == str(beside)
    assert beside_interpreter("no-such-server") == "no-such-server"  # left to PATH, which says why
    assert beside_interpreter("./server") == "./server"


def test_a_human_command_names_a_script_beside_the_profile_with_profile_dir(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "command: srv {root}\n"
        "confirmation:\n"
        "  kind: pending\n"
        "  pending: {id_from: staged_id, human: {command: 'python {profile_dir}/approve.py {id}'},\n"
        "            execute: {tool: execute_pending, args: {pending_id: '{id}'}}}\n"
    )
    human = load_profile(path).confirmation.human  # type: ignore[union-attr]
    assert human is not None
    assert human.approve == (Command(f"python {tmp_path.resolve()}/approve.py {{id}}"),)
