"""`parent-swap`: a directory above the confirmed file becomes a symbolic link.

The user was asked about `sub/victim.txt`. While they decide, `sub` is moved
aside and a link named `sub` takes its place, pointing at a directory (inside
the root, or outside it) that holds a canary called `victim.txt`. The last
component is still a regular file with the confirmed name; only a server that
checks every component, or the file's identity, notices.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from ..oracle.sandbox import CANARY_TEXT
from . import OVER_A_PREVIEW, technique
from ._params import Params
from ._swap import sandbox_name, swap_between_question_and_answer
from .base import Attack


class ParentSwapParams(Params):
    to: Literal["inside", "outside"]


@technique("parent-swap", mechanisms=OVER_A_PREVIEW, premise_asked=True, params=ParentSwapParams)
async def parent_swap(attack: Attack, params: Mapping[str, Any]) -> None:
    if not attack.resolved_by_the_tool():
        return
    case = attack.case
    victim = case.add_file("sub/victim.txt")
    parent = victim.parent
    to = params["to"]
    if to == "inside":
        decoy = case.directory / "canaries"
    elif to == "outside":
        decoy = case.outside_canary.parent / "canaries"
    else:
        raise ValueError(f"parent-swap: unknown destination {to!r}")
    decoy.mkdir()
    (decoy / victim.name).write_text(CANARY_TEXT)

    def swap() -> str:
        os.rename(parent, parent.with_name("sub-moved-aside"))
        os.symlink(decoy, parent)
        return f"after the question: {sandbox_name(attack, parent)} -> link to {sandbox_name(attack, decoy)}"

    await swap_between_question_and_answer(attack, victim, swap)
