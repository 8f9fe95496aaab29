"""How an attack names a sandbox path to its tool: `Attack.path_value`, and `path_text` for a path's text.

prompt-forging makes a file per hostile name and names it by its text (`_made`), never a `Path`: the
value sent must be the one `path_value` gives the `Path` (what `os.path.relpath` gives, relative).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcp_confirm_audit.models import AttackSpec
from mcp_confirm_audit.oracle.sandbox import Sandbox
from mcp_confirm_audit.target.discovery import ToolPlan
from mcp_confirm_audit.techniques.base import Attack
from mcp_confirm_audit.techniques.prompt_forging import _made

SPEC = AttackSpec("MCA-PROMPT-001", "s", "prompt-forging", "t", "high", "MUST", "prompt-forging")


async def _no_other() -> object:
    raise AssertionError("not used")


@pytest.mark.parametrize("style", ["relative", "absolute"])
def test_a_path_s_text_is_named_as_the_path_is(style: str) -> None:
    sandbox = Sandbox()
    try:
        attack = Attack(
            SPEC, ToolPlan("delete_file", "path"), style, sandbox, sandbox.new_case(), None, _no_other
        )  # type: ignore[arg-type]
        names = attack.case.directory / "names"
        names.mkdir()
        for name in ("plain.txt", "a b/c\u202ed.txt", "..x/y..", "sub/dir/deep.txt"):
            made = _made(os.fspath(names), name)
            assert made == str(names / name)
            assert Path(made).is_file()
            expected = made if style == "absolute" else os.path.relpath(made, sandbox.root)
            assert attack.path_text(made) == attack.path_value(Path(made)) == expected
        outside = sandbox.root.parent / "elsewhere" / ".." / "x.txt"  # outside the root, and not normal
        expected = str(outside) if style == "absolute" else os.path.relpath(outside, sandbox.root)
        assert attack.path_value(outside) == attack.path_text(str(outside)) == expected
    finally:
        sandbox.remove()
