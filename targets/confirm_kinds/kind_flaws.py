"""The flaw switches of the confirm-kinds server: each removes exactly one defence."""

from __future__ import annotations

from collections.abc import Collection

FLAWS: dict[str, str] = {
    "predictable-token": "the token is a truncated sha256 of the arguments: computable without the preview",
    "reusable-token": "a token is never spent: it confirms the same action again and again",
    "token-not-bound-to-args": "a token confirms any arguments, not the ones it was previewed for",
    "agent-approval": "an approve tool the agent itself can call stands in for the human's channel",
    "self-attested-flag": "human_approved: true from the caller skips the question",
    "agent-fallback-without-elicitation": "a client that declares no form elicitation gets a pending id it confirms itself",
    "loosening-policy-tool": "set_policy, callable by the agent, raises the size under which nothing is confirmed",
    "ungated-second-tool": "truncate_file acts at once, with no confirmation, beside the gated delete_file",
}
# Which mechanism each flaw weakens (the policy and the second tool go with any).
MECHANISM_OF = {
    "predictable-token": "token",
    "reusable-token": "token",
    "token-not-bound-to-args": "token",
    "agent-approval": "pending",
    "self-attested-flag": "flag",
    "agent-fallback-without-elicitation": "flag",
}


def check(flaws: Collection[str], mechanism: str) -> frozenset[str]:
    unknown = sorted(set(flaws) - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    wrong = sorted(f for f in flaws if MECHANISM_OF.get(f, mechanism) != mechanism)
    if wrong:
        raise ValueError(f"flaw(s) {wrong} weaken another mechanism than {mechanism}")
    return frozenset(flaws)
