"""The shell reference server, through the real SDK client: a command line, asked about unless it is allowed.

Its small shell reads the operators a real one does and runs nothing but builtins confined to the
root. The flaw (a prefix allow-list) runs a command chained after an allowed one unasked; each
careful style holds it its own way: refused, asked about, or run with no shell at all. The
detection matrix (tests/matrix/test_chained_command.py) proves the family against them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import mcp
import pytest
from mcp import types
from rounds import ask, asking_client, import_by_path, redeem, text

pytestmark = pytest.mark.anyio
SHELL = Path(__file__).resolve().parents[2] / "targets" / "shell"
KEY = "run"
YES = {"run": True}
CHAINED = [
    "cat /dev/null ; rm victim.txt",
    "pwd && rm victim.txt",
    "ls no-such-file || rm victim.txt",
    "ls | rm victim.txt",
    "pwd \nrm victim.txt",
    "echo $(rm victim.txt)",
    "echo `rm victim.txt`",
]


@pytest.fixture(scope="module")
def shell() -> ModuleType:
    """targets/shell/server.py, imported by file path (it is not an installed package)."""
    return import_by_path("mcp_shell_reference_server", SHELL / "server.py")


@pytest.fixture(scope="module")
def minishell(shell: ModuleType) -> ModuleType:
    # The server put its folder on sys.path: its shell is the module it imported.
    return sys.modules["minishell"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "victim.txt").write_text("victim")
    (tmp_path / "outside.txt").write_text("outside")
    return root


async def run(c: mcp.Client, line: str) -> types.CallToolResult | types.InputRequiredResult:
    return await c.session.call_tool("run_command", {"command": line}, allow_input_required=True)


@pytest.mark.parametrize("line", CHAINED)
def test_the_small_shell_runs_a_command_chained_by_each_operator_as_a_real_shell_does(
    minishell: ModuleType, root: Path, line: str
) -> None:
    policy = minishell.paths.PathPolicy.create(root)
    minishell.Shell(policy).run(line)
    assert not (root / "victim.txt").exists()


@pytest.mark.parametrize(
    "line",
    [
        "rm ../outside.txt",
        "rm {outside}",
        "echo x > made.txt",
        "rm $HOME",
        "ls & rm victim.txt",
    ],
)
def test_the_small_shell_reaches_nothing_outside_the_root_and_runs_nothing_it_cannot_read(
    minishell: ModuleType, root: Path, line: str
) -> None:
    policy = minishell.paths.PathPolicy.create(root)
    ran = minishell.Shell(policy).run(line.format(outside=root.parent / "outside.txt"))
    assert ran.status != 0, ran
    assert (root / "victim.txt").exists()
    assert (root.parent / "outside.txt").exists()
    assert sorted(p.name for p in root.iterdir()) == ["victim.txt"]


async def test_an_allowed_command_runs_unasked_and_any_other_asks_then_runs_once_approved(
    shell: ModuleType, root: Path
) -> None:
    async with asking_client(shell.build_server(root)) as c:
        listed = await run(c, "ls")
        assert text(listed) == "exit status 0\nstdout:\nvictim.txt\n"
        asked = await ask(c, {"command": "rm victim.txt"}, tool="run_command")
        question = asked.input_requests[KEY]
        assert isinstance(question, types.ElicitRequest)
        assert 'Run this command in the server\'s folder? "rm victim.txt"' in question.params.message
        assert (root / "victim.txt").exists()
        done = await redeem(
            c, {"command": "rm victim.txt"}, asked.request_state, YES, tool="run_command", key=KEY
        )
        assert text(done) == "exit status 0"
    assert not (root / "victim.txt").exists()


async def test_a_line_approved_for_the_session_runs_unasked_from_then_on_and_no_other_does(
    shell: ModuleType, root: Path
) -> None:
    # "Approve for this session" (--remember): the exact line approved with the box ticked, nothing wider.
    (root / "other.txt").write_text("other")
    async with asking_client(shell.build_server(root, remember=True, allowed=["pwd"])) as c:
        asked = await ask(c, {"command": "touch made.txt"}, tool="run_command")
        question = asked.input_requests[KEY]
        assert isinstance(question, types.ElicitRequest)
        assert "remember" in question.params.requested_schema["properties"]
        await redeem(
            c,
            {"command": "touch made.txt"},
            asked.request_state,
            {"run": True, "remember": True},
            tool="run_command",
            key=KEY,
        )
        again = await run(c, "touch made.txt")
        assert text(again) == "exit status 0"
        assert isinstance(await run(c, "touch other.txt"), types.InputRequiredResult)
        # A yes without the box ticked is for that call only.
        once = await ask(c, {"command": "rm other.txt"}, tool="run_command")
        await redeem(c, {"command": "rm other.txt"}, once.request_state, YES, tool="run_command", key=KEY)
        (root / "other.txt").write_text("other")
        assert isinstance(await run(c, "rm other.txt"), types.InputRequiredResult)
    assert (root / "other.txt").exists()


async def test_a_path_it_would_never_act_on_is_refused_before_anyone_is_asked(
    shell: ModuleType, root: Path
) -> None:
    async with asking_client(shell.build_server(root)) as c:
        refused = await run(c, "rm ../outside.txt")
    assert isinstance(refused, types.CallToolResult)
    assert refused.is_error
    assert "is outside the root" in text(refused)


async def test_a_file_replaced_after_the_question_is_not_the_one_approved(
    shell: ModuleType, root: Path
) -> None:
    async with asking_client(shell.build_server(root)) as c:
        asked = await ask(c, {"command": "rm victim.txt"}, tool="run_command")
        (root / "victim.txt").unlink()
        (root / "victim.txt").write_text("another file under the same name")
        done = await redeem(
            c, {"command": "rm victim.txt"}, asked.request_state, YES, tool="run_command", key=KEY
        )
    assert isinstance(done, types.CallToolResult)
    assert done.is_error
    assert "changed while waiting for confirmation" in text(done)
    assert (root / "victim.txt").read_text() == "another file under the same name"


@pytest.mark.parametrize("line", CHAINED)
async def test_the_prefix_allow_list_runs_the_chained_command_unasked(
    shell: ModuleType, root: Path, line: str
) -> None:
    async with asking_client(shell.build_server(root, flaws=["prefix-allow-list"])) as c:
        ran = await run(c, line)
    assert isinstance(ran, types.CallToolResult)
    assert not (root / "victim.txt").exists()


# How each careful style answers a chained line: refused, asked about, or run as one program's argv.
HOLDS: dict[str, Any] = {
    "operators": lambda r: isinstance(r, types.CallToolResult) and r.is_error and "joins commands" in text(r),
    "every-part": lambda r: isinstance(r, types.InputRequiredResult),
    "argv": lambda r: isinstance(r, types.CallToolResult) and text(r).startswith("exit status"),
}


@pytest.mark.parametrize("style", sorted(HOLDS))
@pytest.mark.parametrize("line", CHAINED)
async def test_each_careful_style_holds_the_chained_command_its_own_way(
    shell: ModuleType, root: Path, style: str, line: str
) -> None:
    async with asking_client(shell.build_server(root, style=style, failures="result")) as c:
        reply = await run(c, line)
    assert HOLDS[style](reply), reply
    assert (root / "victim.txt").read_text() == "victim"
