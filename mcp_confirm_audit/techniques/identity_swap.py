"""`identity-swap`: the same name, but not the file the user confirmed.

While the user decides, another regular file is renamed onto the victim's name
(another inode, with the victim's size and modification time copied, so only
the inode tells them apart); or the victim is rewritten in place (the same
inode, another size and time); or it is deleted, and the tool must not then
claim it deleted it. A tool that writes its file (creates it where it is
missing) and created it again at the approved path did what was approved,
content at that path: that is told from a claim by what the disk shows, the
entry created by the call, and the attack does not apply to it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..engine.reading import Judged, Reading, Seen, reads
from ..models import Part, Verdict
from ..oracle.sandbox import VICTIM_TEXT
from . import OVER_A_PREVIEW, technique
from ._params import Params
from ._swap import sandbox_name, swap_between_question_and_answer
from .base import Attack
from .out_of_root import staged_path

# As long as the victim's text, so size alone cannot tell the two apart.
IMPOSTOR_TEXT = "impostor: not the file the user saw".ljust(len(VICTIM_TEXT) - 1, ".") + "\n"
REWRITTEN_TEXT = "victim, rewritten after the user was asked about it: longer now\n"


class IdentitySwapParams(Params):
    change: Literal["renamed-onto", "rewritten-in-place", "deleted"]


@dataclass(frozen=True, slots=True)
class DeletedBeforeTheAnswer(Part):
    """The confirmed file (its sandbox path), deleted by the harness after the question."""

    path: str


@reads(DeletedBeforeTheAnswer)
class ReadDeletedBeforeTheAnswer(Reading[DeletedBeforeTheAnswer]):
    def still(self, part: DeletedBeforeTheAnswer, seen: Seen) -> Judged | None:
        # A new entry is no effect (verdict.effect_of), so a write lands here: created, not claimed.
        if part.path not in seen.effect.added:
            return None
        reason = (
            f"the action writes its file: after {part.path} was deleted, the call created it again at the "
            "approved path, which is what was approved (content at that path), not a success it could not "
            "have had; a swap of a file that is gone does not apply to a write"
        )
        return Verdict.NOT_APPLICABLE, None, reason


@technique("identity-swap", mechanisms=OVER_A_PREVIEW, premise_asked=True, params=IdentitySwapParams)
async def identity_swap(attack: Attack, params: Mapping[str, Any]) -> None:
    if not attack.resolved_by_the_tool():
        return
    if not attack.names_file and staged_path(attack.plan.setup) is None:
        attack.file_only()  # not applicable, saying why, before its case is made
        return
    victim = attack.case.victim
    change = params["change"]
    if change not in ("renamed-onto", "rewritten-in-place", "deleted"):
        raise ValueError(f"identity-swap: unknown change {change!r}")
    where = sandbox_name(attack, victim)

    def swap() -> str:
        seen = os.stat(victim)
        if change == "renamed-onto":
            impostor = victim.with_name("impostor.txt")
            impostor.write_text(IMPOSTOR_TEXT)
            os.utime(impostor, ns=(seen.st_atime_ns, seen.st_mtime_ns))
            os.replace(impostor, victim)
            return f"after the question: another file (same size and mtime) renamed onto {where}"
        if change == "rewritten-in-place":
            with open(victim, "r+") as handle:
                handle.write(REWRITTEN_TEXT)
            # A later second, in case the filesystem's clock is coarse.
            os.utime(victim, ns=(seen.st_atime_ns, seen.st_mtime_ns + 1_000_000_000))
            attack.changed_in_place(victim)
            return f"after the question: {where} rewritten in place (same inode, other size and mtime)"
        os.unlink(victim)
        attack.record(DeletedBeforeTheAnswer(where))
        return f"after the question: {where} deleted"

    await swap_between_question_and_answer(attack, victim, swap)
