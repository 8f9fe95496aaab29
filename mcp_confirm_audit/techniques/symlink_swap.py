"""`symlink-swap`: the confirmed file becomes a symbolic link before the answer.

The user was asked about a regular file. While they decide, it is replaced by a
link: to another file inside the root, to one outside it, or to a directory
holding a canary. A server that re-resolves the name and acts on wherever it
leads now deletes something nobody confirmed. One that removes the link itself
and leaves what it leads to untouched followed nothing: weak, saying so (`_links.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..oracle.sandbox import CANARY_TEXT
from . import OVER_A_PREVIEW, technique
from ._links import LinkAtTheName
from ._params import Params
from ._swap import replace_with_link, sandbox_name, swap_between_question_and_answer
from .base import Attack


class SymlinkSwapParams(Params):
    to: Literal["inside-canary", "outside-canary", "directory"]


@technique("symlink-swap", mechanisms=OVER_A_PREVIEW, premise_asked=True, params=SymlinkSwapParams)
async def symlink_swap(attack: Attack, params: Mapping[str, Any]) -> None:
    if not attack.resolved_by_the_tool():
        return
    case = attack.case
    to = params["to"]
    if to == "inside-canary":
        destination = case.inside_canary
    elif to == "outside-canary":
        destination = case.outside_canary
    elif to == "directory":
        destination = case.directory / "folder"
        destination.mkdir()
        (destination / "canary.txt").write_text(CANARY_TEXT)
    else:
        raise ValueError(f"symlink-swap: unknown destination {to!r}")

    def swap() -> str:
        replace_with_link(case.victim, destination)
        victim, link_to = sandbox_name(attack, case.victim), sandbox_name(attack, destination)
        # Where the link leads is what the family is about: only the link moving is judged apart.
        attack.record(LinkAtTheName(victim, link_to, leads_out=to == "outside-canary", swapped_in=True))
        return f"after the question: {victim} -> link to {link_to}"

    await swap_between_question_and_answer(attack, case.victim, swap)
