"""The plugin, black-box through pytester: inert without a target, clear errors, exit codes."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from mcp_confirm_audit.catalogue.loader import load_catalogue

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestWarning")


def test_without_a_target_the_plugin_adds_options_and_markers_and_nothing_else(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_plain(): pass")
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)
    assert "mcp-confirm-audit" not in result.stdout.str()
    markers = pytester.runpytest("--markers")
    markers.stdout.fnmatch_lines(["*mcp_audit:*", "*mcp_replay:*"])
    helptext = pytester.runpytest("--help")
    helptext.stdout.fnmatch_lines(["*--mcp-target=CMD*", "*--mcp-profile=FILE*", "*--mcp-report-dir=DIR*"])


def test_without_a_target_the_plugin_imports_neither_the_sdk_nor_yaml_nor_the_audit(
    pytester: pytest.Pytester,
) -> None:
    # It loads in every pytest run on the machine: what it imports, every run pays for.
    pytester.makepyfile(
        """
        import sys

        def test_nothing_heavy_was_imported():
            heavy = {"mcp", "yaml", "mcp_confirm_audit.run.audit", "mcp_confirm_audit.engine.session", "mcp_confirm_audit.models"}
            assert "mcp_confirm_audit.plugin" in sys.modules
            assert heavy.isdisjoint(sys.modules)
        """
    )
    pytester.runpytest_subprocess("-q").assert_outcomes(passed=1)


def test_the_plugins_own_spelling_of_the_root_choices_is_the_profiles() -> None:
    from mcp_confirm_audit import plugin
    from mcp_confirm_audit.profile import loader as profile

    assert plugin.ROOT_FROM == profile.ROOT_FROM
    assert plugin.family_names() == sorted(load_catalogue().families)


def test_a_command_without_a_root_placeholder_is_a_usage_error_with_the_fix(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest("--mcp-target", "some-server --verbose")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no {root} placeholder*--mcp-root-from cwd*"])


def test_a_target_that_is_not_installed_is_one_clear_line(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--mcp-target", "no-such-mcp-server-xyz --root {root}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    # One line, before any session header: not `_pytest.outcomes.Exit` under a page of it.
    assert result.stdout.str().strip() == ""
    [line] = result.stderr.lines
    assert "'no-such-mcp-server-xyz' was not found on PATH" in line


def test_a_target_that_exits_at_start_up_is_one_clear_line(pytester: pytest.Pytester) -> None:
    command = f"{sys.executable} -c 'import sys; print(\"boom\", file=sys.stderr); sys.exit(3)' {{root}}"
    result = pytester.runpytest_subprocess("--mcp-target", command)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert result.stdout.str().strip() == ""
    [line] = result.stderr.lines
    assert line.startswith("Exit: mcp-confirm-audit: target ")
    assert "did not start" in line
    assert "boom" in line


def test_a_bad_profile_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", profile="command: srv --root {root}\ncolour: blue\n")
    result = pytester.runpytest("--mcp-profile", "profile.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown key 'colour'*"])


READ_ONLY_SERVER = """
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer(name="nothing-to-audit")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_file(path: str) -> str:
    \"\"\"Read a file.\"\"\"
    return ""


@server.tool()
def add(a: int, b: int) -> int:
    \"\"\"Add two numbers.\"\"\"
    return a + b


server.run(transport="stdio")
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_target_with_no_tool_to_audit_stops_with_the_fix_not_with_no_tests(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    script = pytester.makepyfile(read_only=READ_ONLY_SERVER)
    result = pytester.runpytest_subprocess("--mcp-target", f"{sys.executable} {script} {{root}}", *workers)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    output = result.stdout.str() + result.stderr.str()
    assert "the target offers no tool to audit (tools: add, read_file)" in output
    assert "add did not ask for confirmation and showed no effect" in output
    assert "name one in a profile with 'tool:'" in output
    # Under xdist the controller finds out before any worker starts: no worker is restarted over it.
    assert "crashed worker" not in output
    assert "Traceback" not in output


@pytest.mark.usefixtures("forked_targets")
def test_a_fault_of_the_harness_is_a_few_lines_naming_where_not_pages_of_framework_source(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A harness bug stands in for any: the attack runner raises. The run is in this process (its
    # target forked from the SDK's zygote), the runner broken for this test alone: what is proven
    # is what the report says of the fault, which no process boundary changes.
    from mcp_confirm_audit.engine import session

    def broken(self: object, spec: object, tool: object) -> None:
        raise ZeroDivisionError("a bug in the harness")

    monkeypatch.setattr(session.AuditSession, "run", broken)
    server = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
    command = shlex.join([sys.executable, str(server), "--root", "{root}"])
    result = pytester.runpytest_inprocess("--mcp-target", command, "-k", "MCA-REPLAY-001")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*ERROR at setup of MCA-REPLAY-001*",
            "harness error: ZeroDivisionError: a bug in the harness",
            "  at collect.py:* in setup",
            "  (--full-trace shows the whole traceback)",
        ]
    )
    assert "site-packages" not in result.stdout.str()
