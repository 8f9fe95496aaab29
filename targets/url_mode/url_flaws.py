"""The flaw switches of the URL-mode server: each removes exactly one defence."""

from __future__ import annotations

from collections.abc import Collection

FLAWS: dict[str, str] = {
    "user-data-in-url": "the page's URL carries the person's e-mail address",
    "preauthenticated-url": "the page asks for no sign-in: whoever holds the URL (the agent) completes it",
    "acts-on-accept": "an accept pays at once, whether or not anyone completed the page",
    "any-person-completes": "any signed-in person may complete the page, not only the one who started it",
    "waits-forever": "an accept to a page nobody completed waits for it with no bound, then pays",
    "raw-page": "the page shows the recipient and memo as raw HTML: their markup is live",
}


def check(flaws: Collection[str]) -> frozenset[str]:
    """The active flaws; ValueError for an unknown one."""
    unknown = sorted(set(flaws) - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    return frozenset(flaws)
