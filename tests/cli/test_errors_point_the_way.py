"""Errors that point the right way: each a single line that names what is wrong and the fix.

Run as a person runs them: `mcp-confirm-audit run` in a subprocess, from a folder of their own.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from deadline import deadline

from mcp_confirm_audit.target.launch import free_port

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestWarning")


def cli(cwd: Path, *argv: str) -> tuple[int, list[str]]:
    """The exit code and the non-empty lines the CLI wrote (stdout and stderr)."""
    run = subprocess.run(
        [sys.executable, "-m", "mcp_confirm_audit.cli.main", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=deadline(180),
        stdin=subprocess.DEVNULL,
    )
    lines = [line for line in (run.stdout + run.stderr).splitlines() if line.strip()]
    return run.returncode, lines


def test_a_yaml_syntax_error_keeps_the_parsers_reason_and_line(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("command: srv --root {root}\ntool: delete_file\n  path_arg: path\n")
    code, [line] = cli(tmp_path, "run", "--profile", "p.yaml")
    assert code == pytest.ExitCode.USAGE_ERROR
    assert line == (
        "ERROR: profile p.yaml is not valid YAML (line 3, column 11: mapping values are not allowed here): "
        "fix the syntax there"
    )


def test_a_relative_script_path_in_a_profile_says_where_the_target_runs_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "servers").mkdir()
    (tmp_path / "servers" / "srv.py").write_text("")
    (tmp_path / "p.yaml").write_text("command: python servers/srv.py --root {root}\n")
    code, [line] = cli(tmp_path, "run", "--profile", "p.yaml")
    assert code == pytest.ExitCode.USAGE_ERROR
    assert line == (
        "ERROR: p.yaml: the command names 'servers/srv.py', a relative path, but the target runs in its "
        "sandbox root, where it is not: write {profile_dir}/servers/srv.py (beside the profile) or an "
        "absolute path"
    )


def test_a_relative_script_path_on_the_command_line_names_its_absolute_path(tmp_path: Path) -> None:
    (tmp_path / "srv.py").write_text("")
    code, [line] = cli(tmp_path, "run", "--", "python", "srv.py", "--root", "{root}")
    assert code == pytest.ExitCode.USAGE_ERROR
    assert line.endswith(f"where it is not: write its absolute path, {tmp_path.resolve() / 'srv.py'}")


def test_a_server_that_prints_to_stdout_is_one_line_not_the_sdks_tracebacks(tmp_path: Path) -> None:
    server = tmp_path / "noisy.py"
    server.write_text("import sys\nprint('starting \\x1b[31mserver\\x1b[0m on stdio')\nsys.stdin.read()\n")
    command = shlex.join([sys.executable, str(server), "--root", "{root}"])
    code, lines = cli(tmp_path, "run", command, "--", f"--mcp-start-timeout={deadline(5):g}")
    assert code == pytest.ExitCode.INTERRUPTED
    assert lines == [
        f"Exit: mcp-confirm-audit: target {command!r}: the server wrote non-JSON-RPC to stdout: "
        "'starting \\x1b[31mserver\\x1b[0m on stdio'; servers on stdio must log to stderr"
    ]


def test_a_server_that_frames_stdio_with_content_length_headers_is_told_mcp_is_one_message_a_line(
    tmp_path: Path,
) -> None:
    # actgate's framing (a language server's): a header, a blank line, then the JSON with no newline.
    server = tmp_path / "lsp.py"
    server.write_text(
        'import sys\nbody = \'{"jsonrpc": "2.0", "method": "ready"}\'\n'
        "sys.stdout.write(f'Content-Length: {len(body)}\\r\\n\\r\\n{body}')\nsys.stdout.flush()\n"
        "sys.stdin.read()\n"
    )
    command = shlex.join([sys.executable, str(server), "--root", "{root}"])
    code, lines = cli(tmp_path, "run", command, "--", f"--mcp-start-timeout={deadline(5):g}")
    assert code == pytest.ExitCode.INTERRUPTED
    assert lines == [
        f"Exit: mcp-confirm-audit: target {command!r}: the server wrote 'Content-Length: 37\\r' to stdout, "
        "a Content-Length header as a language server frames its messages, but MCP's stdio transport is one "
        "JSON-RPC message per line with no headers: make it write each message as one line of JSON (or serve "
        "it over HTTP and give its url)"
    ]


def test_a_server_that_waits_for_a_content_length_header_is_told_mcp_is_one_message_a_line(
    tmp_path: Path,
) -> None:
    # actgate's reader: header lines until a blank one; MCP's one line of JSON never ends the headers.
    server = tmp_path / "waits.py"
    server.write_text("import sys\nwhile sys.stdin.readline() not in ('\\r\\n', '\\n', ''):\n    pass\n")
    command = shlex.join([sys.executable, str(server), "--root", "{root}"])
    code, [line] = cli(tmp_path, "run", command, "--", f"--mcp-start-timeout={deadline(5):g}")
    assert code == pytest.ExitCode.INTERRUPTED
    assert (
        "; nothing came back on stdout (MCP's stdio transport is one JSON-RPC message per line: a server that "
        "waits for a Content-Length header, as a language server does, never answers); check it starts by hand"
    ) in line


def test_a_url_where_nothing_listens_says_so_and_to_start_the_server(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    (tmp_path / "served").mkdir()
    code, lines = cli(tmp_path, "run", url, "--", "--mcp-root=served")
    assert code == pytest.ExitCode.INTERRUPTED
    assert lines == [
        f"Exit: mcp-confirm-audit: nothing listens at {url}: start the server first, or give the command "
        "that starts it (with {port} where it takes its port)"
    ]


def test_a_server_that_exits_at_once_shows_its_exit_status_and_last_stderr_line(tmp_path: Path) -> None:
    server = tmp_path / "dies.py"
    server.write_text(
        "import sys\nprint('loading', file=sys.stderr)\nprint('no config at /etc/srv.toml', file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    code, [line] = cli(tmp_path, "run", shlex.join([sys.executable, str(server), "--root", "{root}"]))
    assert code == pytest.ExitCode.INTERRUPTED
    # Its status comes from the confined target's init (the default regime; CI confines).
    assert line.endswith(
        "did not start: it exited with status 3 before answering initialize (stderr ends: no config at "
        "/etc/srv.toml); run the command by hand to see why"
    )
