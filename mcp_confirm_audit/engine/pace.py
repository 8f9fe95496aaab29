"""The person's pace, learned when no profile sets one: a target that refuses a yes sent at once.

Some servers refuse an answer that comes sooner than a person can read the question (PyPI
magnemo-mcp refuses one inside 300 ms). With no `answer_after` in the profile, the harness
answers at once; when the target refuses the approve control's yes as too soon, the control
runs again at each pace of a short ladder, and the first that passes is kept for the tool's
audit. The ladder is the target's rule, not a deadline: never scaled (`--deadline-scale`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Seconds between the question and the answer, tried in order: a person who reads, then a slow one.
LADDER = (0.5, 2.0)

# A reply that says the answer came too soon for a person (in an ordinary result too: magnemo-mcp's
# `"asked": "refused: answered too fast to be a person (12 ms)"`).
TOO_SOON = re.compile(r"too (?:fast|quick|soon)|faster than|not a (?:person|human)", re.IGNORECASE)


def said_too_soon(text: str) -> str | None:
    """The words of a reply that say the answer came too soon for a person, with their context."""
    found = TOO_SOON.search(text)
    if found is None:
        return None
    return text[max(found.start() - 120, 0) : found.end() + 60]


def learned(tool: str, seconds: float, refused: Sequence[float], said: str) -> str:
    """The learned fact, as the report's `pace` control says it."""
    sooner = " and ".join(["one sent at once", *(f"one sent {s:g} s after its question" for s in refused)])
    return (
        f"the target refuses an answer sooner than a person reads: it refused a yes, {sooner} "
        f"(…{said}…), and took one sent {seconds:g} s after its question; every answer on {tool} "
        f"waits {seconds:g} s after its question (answer_after: SECONDS in a profile sets the pace)"
    )


def still_refused(tried: Sequence[float], other: str | None) -> str:
    """What the approve control's line adds when no pace of the ladder passed."""
    paces = " and ".join(f"{s:g} s" for s in tried)
    if other is not None:
        return f"; answered again {paces} after the question: {other[:300]}"
    return f"; answered again {paces} after the question, the yes was refused as well"
