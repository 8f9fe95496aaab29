"""The flaw switches of the payments server: each removes exactly one defence."""

from __future__ import annotations

from collections.abc import Collection

FLAWS: dict[str, str] = {
    "no-ledger": "the state's nonce is never spent: one approval pays again until the seal expires",
    "racy-ledger": "spending is check, then spend: concurrent redemptions of one approval all pay",
    "decline-acts": "decline and cancel pay as if the user had accepted",
    "stateless-answers": "an answer sent without requestState is accepted and paid",
    "unescaped-memo": "memo and recipient go into the question as they are: line breaks, bidi, markup",
    "unsealed-state": "the SDK's seal is removed; the state is readable JSON whose payment the server trusts",
    "elicits-without-capability": "a client that declared no form elicitation is sent the form all the same",
    "flag-pays-beyond-allow-list": "with --allow, human_approved: true from the caller pays a recipient off the list",
    "memo-not-last": "with --question memo-below, a line of the question's own follows the memo",
    "memo-unfenced": "with --question memo-below, no separator line stands above the memo",
}
# What only the memo-below question has: the flaws of where its memo stands.
MEMO_BELOW = frozenset({"memo-not-last", "memo-unfenced"})
# Each group replaces one check (how a nonce is spent; where the memo stands): one server cannot do both.
_EXCLUSIVE = (frozenset({"no-ledger", "racy-ledger"}), MEMO_BELOW)


def check(flaws: Collection[str], question: str = "inline") -> frozenset[str]:
    """The active flaws; ValueError for an unknown flaw, two that replace the same check, or a flaw of
    the memo-below question asked without it."""
    unknown = sorted(set(flaws) - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    active = frozenset(flaws)
    for group in _EXCLUSIVE:
        if len(active & group) > 1:
            raise ValueError(f"flaws {sorted(active & group)} replace the same check; choose one")
    if active & MEMO_BELOW and question != "memo-below":
        raise ValueError(f"flaw(s) {sorted(active & MEMO_BELOW)} need --question memo-below")
    return active
