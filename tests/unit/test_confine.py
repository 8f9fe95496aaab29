"""The launcher's confinement: what a command needs from the hidden folders, the regime line, and stale sandboxes."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from deadline import deadline

from mcp_confirm_audit.oracle.sandbox import OWNER, mark_owner, sweep
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target import confine

CONFINED = confine.Regime(True, net=True)


def _spec(argv: list[str]) -> dict[str, object]:
    assert argv[:4] == [sys.executable, "-I", "-S", confine.SCRIPT]
    spec: dict[str, object] = json.loads(argv[5])
    return spec


def test_the_regime_line_says_what_is_confined_and_why_not() -> None:
    assert CONFINED.line() == "unshare (user, pid, mount, net loopback-only)"
    host = confine.Regime(True, net=False, why="as the profile says (network: host)")
    assert host.line() == "unshare (user, pid, mount; network: host, as the profile says (network: host))"
    shared = confine.Regime(True, net=True, shared=True, why="the target serves HTTP to the harness")
    assert shared.line() == (
        "unshare (user, pid, mount, net loopback-only shared with the harness: the target serves HTTP to the harness)"
    )
    assert confine.Regime(False, why="no user namespaces").line() == "none: no user namespaces"


def test_a_target_the_harness_does_not_start_is_not_confined_and_the_line_says_why() -> None:
    assert confine.regime(Profile(command="py:pkg.mod:factory")).line() == (
        "none: an in-process target runs inside the harness"
    )
    assert confine.regime(Profile(command="http://127.0.0.1:9/mcp")).line().startswith("none: the target is")
    off = replace(Profile(command="python server.py --root {root}"), confinement="off")
    assert confine.regime(off).line() == "none: turned off (--mcp-no-confinement)"


@pytest.mark.parametrize(
    ("settings", "network", "why"),
    [
        ({"network": "host"}, "host", "as the profile says (network: host)"),
        (
            {"command": "python s.py --root {root} --port {port}"},
            "shared",
            "the target serves HTTP to the harness",
        ),
        (
            {"command": "python s.py --root {root} --hook {sink}/hook"},
            "shared",
            "the target sends to the harness's sink",
        ),
        (
            {"command": "python s.py --upstream http://127.0.0.1:8080"},
            "shared",
            "the target is given a loopback address",
        ),
        (
            {"command": "python s.py --upstream http://localhost/api"},
            "host",
            "the target is given a loopback address without a port",
        ),
    ],
)
def test_a_target_with_a_loopback_peer_shares_the_runs_network_or_keeps_the_hosts(
    settings: dict[str, str], network: str, why: str
) -> None:
    profile = replace(Profile(command="python s.py --root {root}"), **settings)  # type: ignore[arg-type]
    assert confine._peer(profile) == (network, why)
    assert confine._peer(Profile(command="python s.py --root {root}")) == ("own", "")


def test_the_loopback_ports_a_profile_names_are_a_fakes_and_its_placeholders_are_not() -> None:
    assert confine._fake_ports(Profile(command="s --api http://127.0.0.1:8123/v1 --hook {sink}/x")) == [8123]
    assert confine._fake_ports(Profile(command="s --url http://localhost:{port}/mcp")) == []
    assert confine._fake_ports(Profile(command="s --api http://localhost/v1")) is None


def test_what_a_command_needs_from_a_hidden_home_is_bound_back_and_its_root_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    venv_bin = home / ".venvs" / "server" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    tool = venv_bin / "serve-mcp"
    tool.write_text(f"#!{venv_bin / 'python'}\nprint('hi')\n")
    tool.chmod(0o755)
    script_dir = home / "project"
    script_dir.mkdir()
    (script_dir / "server.py").write_text("")
    monkeypatch.setenv("HOME", str(home))
    base = tmp_path / "sandbox"
    root = base / "root"
    root.mkdir(parents=True)
    argv = confine.wrap(CONFINED, [str(tool), str(script_dir / "server.py"), "--root", str(root)], base, root)
    spec = _spec(argv)
    assert argv[6:] == ["--", str(tool), str(script_dir / "server.py"), "--root", str(root)]
    reveal = spec["reveal"]
    assert isinstance(reveal, list)
    assert str(home / ".venvs" / "server") in reveal  # the console script's prefix (a venv in the home)
    assert str(script_dir) in reveal  # the folder of the script it runs
    assert str(root) not in reveal  # writable: never bound read-only
    assert str(home) in spec["hide"]  # type: ignore[operator]
    assert spec["writable"] == [str(base)]
    assert spec["net"] is True
    assert confine.wrap(confine.Regime(False, why="x"), ["a", "b"], base, root) == ["a", "b"]


def test_a_linked_interpreter_named_after_env_is_seen_where_it_is_named_and_where_it_links(
    tmp_path: Path,
) -> None:
    """`env X=1 VENV/bin/python server.py`: the venv's python is a link out of the venv (trmm-mcp's, zero-config):
    only its target's folder was bound, so the link did not resolve in the sandbox (exit 127)."""
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    needed = confine.needed_by(["env", "X=1", str(bin_dir / "python"), "server.py"])
    assert str(bin_dir) in needed, needed
    assert os.path.dirname(os.path.realpath(sys.executable)) in needed, needed


def _namespaces_or_fail() -> None:
    # Confinement is a security property: on Linux (CI) a machine that cannot make the namespaces
    # fails its tests rather than skipping them, as a missing redis-server does.
    if (missing := confine._probe(True)) is not None:
        message = f"no unprivileged user namespaces here ({missing}): the confinement cannot be tested"
        if sys.platform.startswith("linux"):
            pytest.fail(message)
        pytest.skip(message)


def _confined_shell(line: str, base: Path, root: Path) -> subprocess.CompletedProcess[str]:
    """`sh -c LINE` started confined on the sandbox `base`, in its root."""
    return subprocess.run(
        confine.wrap(CONFINED, ["sh", "-c", line], base, root),
        cwd=root,
        capture_output=True,
        text=True,
        timeout=deadline(60),
        check=False,
    )


def test_a_script_named_inside_a_shell_line_is_seen_by_the_confined_target(tmp_path: Path) -> None:
    # `run -- sh -c 'exec python /path/server.py --root .'`: the script is one word of a shell line, in a
    # folder the confinement hides (/tmp here). Unseen, the target exits `can't open file`, though the
    # same command works by hand.
    _namespaces_or_fail()
    scripts = tmp_path / "server's folder"
    scripts.mkdir()
    (scripts / "server.py").write_text("print('the script ran')\n")
    base = tmp_path / "sandbox"
    root = base / "root"
    root.mkdir(parents=True)
    line = f"exec {shlex.quote(sys.executable)} {shlex.quote(str(scripts / 'server.py'))} --root ."
    assert str(scripts) in confine.needed_by(["sh", "-c", line])
    done = _confined_shell(line, base, root)
    assert done.stdout.strip() == "the script ran", done.stderr


def test_a_shell_line_that_does_not_split_is_only_a_word() -> None:
    assert confine.needed_by(["sh", "-c", "echo 'unclosed /nonexistent/x"]) == confine.needed_by(["sh"])


def test_a_sandbox_whose_owner_is_gone_is_removed_by_the_next_run_and_no_other(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    orphan, mine, foreign = (tmp_path / f"mcp-audit-{name}" for name in ("orphan", "mine", "foreign"))
    for directory in (orphan, mine, foreign):
        directory.mkdir()
    (orphan / OWNER).write_text(f"{gone.pid} 1\n")
    mark_owner(mine)
    assert sweep(str(tmp_path), "mcp-audit-") == [orphan]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp-audit-foreign", "mcp-audit-mine"]


def test_a_confined_command_writes_apart_sees_loopback_only_and_its_writes_are_reported(
    tmp_path: Path,
) -> None:
    _namespaces_or_fail()
    base = tmp_path / "sandbox"
    root = base / "root"
    root.mkdir(parents=True)
    marker = f"confine-unit-{os.getpid()}"
    script = (
        f"echo {marker} > /tmp/{marker}; cat /proc/net/dev > seen; touch /etc/{marker} 2>/dev/null; echo done"
    )
    done = _confined_shell(script, base, root)
    assert done.stdout.strip() == "done", done.stderr
    assert not Path(f"/tmp/{marker}").exists()
    assert not Path(f"/etc/{marker}").exists()
    interfaces = [line.split(":")[0].strip() for line in (root / "seen").read_text().splitlines()[2:]]
    assert interfaces == ["lo"]
    written = confine.outside_writes(base)
    assert {"path": f"/tmp/{marker}", "bytes": len(marker) + 1, "text": f"{marker}\n"} in written


# The person's steps run in the harness's network: only one that may reach the target keeps the host's.
_TOOLPERMIT_PERSON = """
confirmation:
  kind: waits
  waits:
    human:
      - {command: "toolpermit approvals list --database {root}/audit.db", shows: true}
      - {command: "toolpermit approvals list --json --database {root}/audit.db", save: {aid: approvals.0.id}}
      - command: "toolpermit approvals approve {aid} --database {root}/audit.db"
    decline:
      - {command: "toolpermit approvals list --json --database {root}/audit.db", save: {aid: approvals.0.id}}
      - command: "toolpermit approvals reject {aid} --database {root}/audit.db"
"""
_TERMINAL_PERSON = """
tty: true
confirmation:
  kind: waits
  waits:
    human: [{terminal: {expect: 'allow\\? ', answer: y}}]
"""
_DEVICE_PERSON = """
confirmation:
  kind: pending
  pending:
    id_from: request_id
    human:
      - {read: {from: stderr, pattern: 'device API (http://\\S+)'}, save: api}
      - command: "device card {api} {id}"
"""
_HTTP_PERSON = """
confirmation:
  kind: pending
  pending:
    id_from: pending_id
    human: {http: {url: "http://127.0.0.1:8123/approvals/{id}"}}
"""


@pytest.mark.parametrize(
    ("person", "network"),
    [
        (_TOOLPERMIT_PERSON, "own"),
        (_TERMINAL_PERSON, "own"),
        (_DEVICE_PERSON, "host"),
        (_HTTP_PERSON, "host"),
    ],
    ids=["their-own-cli", "the-targets-terminal", "a-device-api-it-printed", "an-approval-request"],
)
def test_a_persons_steps_take_the_hosts_network_only_when_they_may_reach_the_target(
    tmp_path: Path, person: str, network: str
) -> None:
    # Trial 15: toolpermit's person runs its own CLI on a database in the root, and the target was given
    # the host's network all the same ("the person's steps may reach the target on loopback").
    from mcp_confirm_audit.profile.loader import load_profile

    written = tmp_path / "target.yaml"
    written.write_text(f"command: python s.py --root {{root}}\ntool: delete_file\n{person}")
    expected = (network, "the person's steps may reach the target on loopback" if network == "host" else "")
    assert confine._peer(load_profile(written)) == expected
