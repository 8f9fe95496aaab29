"""A link the harness made at the action's name: what moved decides, never the family's worst case.

symlink-swap and out-of-root are about where a link leads: a canary it leads to, removed, is
the finding (critical, took effect). host-terminal-mcp's `rm` removed only the link itself, an entry
inside the root, and the canary it led to was intact: the report said "critical: took effect" all
the same. Judged here from transcripts alone, both ways: the destination moved is vulnerable as
before; only the link moved is weak, its reason naming the link and the untouched destination; and
nothing moved is the tool's refusal.
"""

from __future__ import annotations

import pytest
from verdict_records import attack_spec

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import (
    Exchange,
    FileIdentity,
    Outcome,
    Phase,
    Precondition,
    Response,
    Transcript,
    TreeSnapshot,
    Verdict,
)
from mcp_confirm_audit.techniques._links import LinkAtTheName

V, W, R = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED
LINK, CANARY, OTHER = "root/001-case/victim.txt", "outside/001-case/canary.txt", "root/001-case/other.txt"
FILE = FileIdentity("file", 1, 11, 5, 100)
BEFORE = TreeSnapshot(
    {
        LINK: FileIdentity("link", 1, 10, 0, 100, link_target="../../outside/001-case/canary.txt"),
        CANARY: FILE,
        OTHER: FileIdentity("file", 1, 12, 5, 100),
    }
)


def without(*gone: str) -> TreeSnapshot:
    return TreeSnapshot({path: entry for path, entry in BEFORE.entries.items() if path not in gone})


# The link replaced by a regular file (a write that renames a new file over the name).
REPLACED = TreeSnapshot({**BEFORE.entries, LINK: FileIdentity("file", 1, 13, 9, 200)})
SWAPPED_IN = LinkAtTheName(LINK, CANARY, leads_out=True, swapped_in=True)
THERE_BEFORE = LinkAtTheName(LINK, CANARY, leads_out=True, swapped_in=False)


def judged(family: str, part: LinkAtTheName, after: TreeSnapshot, said: Response) -> tuple[Verdict, str]:
    spec = attack_spec(family, severity="critical", refuse_before_asking=family == "out-of-root")
    call = Exchange(Phase.ATTACK, "accept", "primary", {"name": "delete_file", "arguments": {}}, said)
    result = judge(
        spec,
        Transcript("MCA-TEST-001", "delete_file", Precondition(True), (call,), BEFORE, after, parts=(part,)),
    )
    return result.verdict, result.reason


DONE = Response(Outcome.COMPLETE, "Exit code: 0")
REFUSED = Response(Outcome.TOOL_ERROR, "the file is no longer a regular file")


@pytest.mark.parametrize(("family", "part"), [("symlink-swap", SWAPPED_IN), ("out-of-root", THERE_BEFORE)])
@pytest.mark.parametrize(
    ("after", "said", "verdict"),
    [
        # The link followed: what it leads to is gone, the family's own finding, as before.
        (without(CANARY), DONE, V),
        (without(LINK, CANARY), DONE, V),
        # The link and something else it was never about: a loss like any other.
        (without(LINK, OTHER), DONE, V),
        # Only the link itself moved, removed or replaced: the canary is intact.
        (without(LINK), DONE, W),
        (REPLACED, DONE, W),
        # Nothing moved: the tool refused.
        (BEFORE, REFUSED, R),
    ],
)
def test_what_moved_decides_between_the_canary_the_link_and_nothing(
    family: str, part: LinkAtTheName, after: TreeSnapshot, said: Response, verdict: Verdict
) -> None:
    got, reason = judged(family, part, after, said)
    assert got is verdict, reason
    if verdict is V:
        assert reason.startswith("the attack took effect on disk")
    if verdict is W:
        # The reason names the link and says the canary is untouched: never that it moved.
        assert f"{LINK} was " in reason
        assert f"what it leads to, {CANARY} (outside the root), is untouched" in reason
        assert "took effect" not in reason


def test_the_weak_reason_says_what_each_family_is_about() -> None:
    _, swapped = judged("symlink-swap", SWAPPED_IN, without(LINK), DONE)
    assert swapped.startswith(
        "acted on the link put in the confirmed file's place, not on the file confirmed"
    )
    assert "identity-swap's finding" in swapped
    assert "followed no link" in swapped
    _, named = judged("out-of-root", THERE_BEFORE, without(LINK), DONE)
    assert named.startswith("acted only on the link itself, an entry inside the root")
    assert "touched nothing out of it" in named
    inside = LinkAtTheName(LINK, "root/001-case/canary.txt", leads_out=False, swapped_in=True)
    _, within = judged("symlink-swap", inside, without(LINK), DONE)
    assert "(inside the root), is untouched" in within
