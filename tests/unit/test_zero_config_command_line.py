"""A tool that runs command lines, planned with nothing configured: its action is `rm` of the case file.

host-terminal-mcp (trial 14) and the shell reference server take `command: str`. Zero configuration
sent the harness's filler, `mcp-confirm-audit`, which no shell runs ("command not found"), or the case
file's path as the whole line: nothing moved, the honest flow never completed, every attack stayed
inconclusive. A file action through the shell has an effect the sandbox shows; its path is quoted as
one word, so a hostile name's blank, newline or `<` cannot split the line or redirect it.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_confirm_audit.profile.loader import Profile, profile_from_mapping
from mcp_confirm_audit.target.discovery import COMMAND_ACTION, command_line_argument, plan_tools
from mcp_confirm_audit.target.driver import ToolInfo


def _tool(name: str, properties: dict[str, Any], required: list[str] | None = None) -> ToolInfo:
    schema = {"type": "object", "properties": properties, "required": required or list(properties)}
    return ToolInfo(name, "", schema, False, None)


SHELL = _tool(
    "execute_command",
    {"command": {"type": "string"}, "working_directory": {"type": "string"}},
    required=["command"],
)


def test_a_command_argument_becomes_rm_of_the_case_file_its_path_quoted() -> None:
    (plan,) = plan_tools([SHELL], Profile(command="x {root}"))
    # Not working_directory, though it names a folder: the line is what runs.
    assert plan.path_arg == "command"
    assert plan.template == {"command": COMMAND_ACTION}
    assert plan.path_styles == ("relative", "absolute")
    assert "'command' takes a command line" in plan.notes[0]
    assert plan.placed("001-case/victim.txt") == "001-case/victim.txt"
    assert plan.placed("a b\nc<d>.txt") == "'a b\nc<d>.txt'"
    # Which file its path reaches is the shell's: the families of a file tool's promises do not apply.
    assert plan.path_in_command


@pytest.mark.parametrize(
    ("name", "prop"),
    [
        ("cmd", {"type": "string"}),
        ("line", {"type": "string", "description": "The shell command to run"}),
        ("script", {"type": "string", "description": "what to execute"}),
    ],
)
def test_an_argument_named_or_described_as_a_command_line_is_one(name: str, prop: dict[str, Any]) -> None:
    assert command_line_argument(_tool("run", {name: prop})) == name


@pytest.mark.parametrize(
    "properties",
    [
        {"path": {"type": "string"}},
        # An argv array is no line a shell reads: left as zero configuration found it.
        {"command": {"type": "array", "items": {"type": "string"}}},
        {"message": {"type": "string", "description": "a note for the operator"}},
    ],
)
def test_other_tools_are_planned_as_before(properties: dict[str, Any]) -> None:
    tool = _tool("act", properties)
    assert command_line_argument(tool) is None
    (plan,) = plan_tools([tool], Profile(command="x {root}"))
    assert plan.template is None
    assert not plan.path_quoted
    assert not plan.path_in_command


def test_a_profile_that_writes_the_line_itself_is_taken_at_its_word_and_can_promise_confinement() -> None:
    raw = {"command": "x {root}", "tool": "execute_command", "args": {"command": "rm -f {path}"}}
    (plan,) = plan_tools([SHELL], profile_from_mapping(raw, source="t"))
    # Its own line, the path in it quoted as one word all the same; a command line with the path in it.
    assert plan.template == {"command": "rm -f {path}"}
    assert plan.path_quoted
    assert plan.path_in_command
    # A line that quotes {path} itself is not quoted twice.
    quoting = {**raw, "args": {"command": "rm -f '{path}'"}}
    (itself,) = plan_tools([SHELL], profile_from_mapping(quoting, source="t"))
    assert not itself.path_quoted
    assert itself.path_in_command
    (confined,) = plan_tools([SHELL], profile_from_mapping({**raw, "confines_paths": True}, source="t"))
    assert not confined.path_in_command
    # A path argument that is the whole value names a file: no command line around it.
    named = {"command": "x {root}", "tool": "execute_command", "args": {"command": "{path}"}}
    (plain,) = plan_tools([SHELL], profile_from_mapping(named, source="t"))
    assert not plain.path_in_command
