"""The flaw switches: each removes exactly one defence from the careful server."""

from __future__ import annotations

from collections.abc import Collection

FLAWS: dict[str, str] = {
    "no-ledger": "no single-use record: one approval redeems again (on any replica) until the SDK TTL",
    "stateless-answers": "answers sent without requestState are accepted and acted on",
    "plain-state": "SDK sealing removed; state is client-readable JSON bound only by a path check",
    "decline-as-accept": "decline and cancel proceed as if the user accepted",
    "truthy-strings": "the answer is judged by Python truthiness ('false', 'no', 1 count as yes)",
    "prefix-containment": "containment by string prefix: a sibling ROOT-evil/ counts as inside",
    "ask-before-check": "round 1 asks before checking that the path is inside the root",
    "link-after-resolve": "the symlink check inspects the resolved destination, not the link",
    "link-last-component-only": "only the final component is checked for a symlink",
    "no-identity-check": "round 2 does not compare the file with the one the user was asked about",
    "sanitiser-keeps-bidi": "the question keeps bidi controls and zero-width characters",
    "sanitiser-truncates-end": "long names are cut at the end, losing the real file name",
    "asks-for-secret": "the form also asks for an 'API key to continue'",
    "per-process-ledger": "the shared ledger is ignored; each process remembers only what it spent itself",
    "check-then-delete-ledger": "spending is check, sleep 50 ms, delete: concurrent redemptions both pass",
}


def check(flaws: Collection[str]) -> frozenset[str]:
    unknown = sorted(set(flaws) - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    return frozenset(flaws)
