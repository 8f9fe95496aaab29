"""The flaw switches: each removes exactly one defence from the careful server."""

from __future__ import annotations

from collections.abc import Collection

FLAWS: dict[str, str] = {
    "no-ledger": "no single-use record: one approval redeems again (on any replica) until the SDK TTL",
    "stateless-answers": "answers sent without requestState are accepted and acted on",
    "plain-state": "SDK sealing removed; the state is readable JSON a client can edit to name another file",
    "trusting-state": "SDK sealing removed; any requestState present counts as proof the question was asked",
    "unbound-state": "SDK sealing removed; state is a bare nonce that serves any file, argument or tool",
    "decline-as-accept": "decline and cancel proceed as if the user accepted",
    "accept-means-yes": "action 'accept' is enough: the form's content is never read",
    "truthy-strings": "the answer is judged by Python truthiness ('false', 'no', 1 count as yes)",
    "any-answer-key": "the answer is read from whatever key is present, not only the key the server asked",
    "duck-typed-answers": "an answer that is not an elicitation result counts as an accept saying yes",
    "no-containment": "no inside-the-root check: absolute paths and ../ reach the whole filesystem",
    "prefix-containment": "containment by string prefix: a sibling ROOT-evil/ counts as inside",
    "lexical-containment": "containment judged on the path as written, no link check; deleting follows links",
    "ask-before-check": "round 1 asks before checking that the path is inside the root",
    "link-after-resolve": "the symlink check inspects the resolved destination, not the link",
    "link-last-component-only": "only the final component is checked for a symlink",
    "deletes-directories": "directories, the root included, are accepted and removed with shutil.rmtree",
    "truncates-at-nul": "the path is cut at its first NUL byte (C-string semantics) before any check",
    "no-identity-check": "round 2 does not compare the file with the one the user was asked about",
    "no-recheck": "round 2 checks nothing again: it acts on wherever the name leads now, links followed",
    "unlinks-the-name": "a path names an entry, as rm takes it: round 1 asks about a link as the link it is "
    "(its folder inside the root), and round 2 unlinks the name as it is now, nothing checked again",
    "missing-is-deleted": "a file already gone at round 2 is reported as deleted (unlink with missing_ok)",
    "sanitiser-keeps-bidi": "the question keeps bidi controls and zero-width characters",
    "sanitiser-truncates-end": "long names are cut at the end, losing the real file name",
    "asks-for-secret": "the form also asks for an 'API key to continue'",
    "unsanitised-question": "the file name goes into the question as it is: line breaks, controls, markup",
    "sanitiser-folds-controls": "every control or invisible character becomes a space: names read alike",
    "sanitiser-category-only": "only control, format and separator categories are escaped: Hangul fillers "
    "and variation selectors (letters and marks that render as nothing) reach the question",
    "nested-form": "the form has a nested object field; elicitation forms are flat, primitive fields only",
    "question-without-name": "the question does not say which file it is about",
    "per-process-ledger": "the shared ledger is ignored; each process remembers only what it spent itself",
    "check-then-delete-ledger": "spending is check, then delete: concurrent redemptions all pass",
    "elicits-without-capability": "the confirmation form goes to a client that declared no form elicitation",
    "no-answer-is-yes": "a client that declared no form elicitation is sent the form and the action goes ahead "
    "without waiting for an answer it cannot give",
    "no-expiry": "the lifetime option reaches neither the SDK's seal nor the ledger: they live 600 s",
    "principal-unbound-state": "SDK sealing removed; the server's own signed state names no principal, so any "
    "authenticated client may redeem another's confirmation",
    "link-unchecked": "with --approve-link, the link is posted but never looked at: the client's accept "
    "alone acts",
    "trusts-identity-header": "the SDK binds states to the principal the client's X-MCP-User header names, "
    "not to the one its token proves",
}

# Flaws that each replace the same mechanism in a different way: two at once is not a server.
STATE_FLAWS = frozenset({"plain-state", "trusting-state", "unbound-state", "principal-unbound-state"})
_EXCLUSIVE = (
    STATE_FLAWS,
    # trusts-identity-header weakens the SDK's boundary, which every state flaw removes.
    frozenset({"trusts-identity-header", *STATE_FLAWS}),
    frozenset({"no-containment", "prefix-containment", "lexical-containment"}),
    # lexical-containment (and unlinks-the-name, for the entry named) has no link check left for these to weaken.
    frozenset({"link-after-resolve", "link-last-component-only", "lexical-containment", "unlinks-the-name"}),
    # unlinks-the-name judges the entry's folder before asking, always.
    frozenset({"ask-before-check", "unlinks-the-name"}),
    # no-recheck drops the identity comparison along with every other round-2 check; unlinks-the-name
    # replaces both rounds' handling of the name.
    frozenset({"no-recheck", "no-identity-check", "unlinks-the-name"}),
    # One sanitiser at a time; unsanitised-question has nothing left to truncate either.
    frozenset(
        {
            "unsanitised-question",
            "sanitiser-keeps-bidi",
            "sanitiser-folds-controls",
            "sanitiser-category-only",
        }
    ),
    frozenset({"unsanitised-question", "sanitiser-truncates-end"}),
)
# trusting-state never reads a nonce, so there is no nonce ledger for these to weaken.
_LEDGER_FLAWS = frozenset({"no-ledger", "per-process-ledger", "check-then-delete-ledger"})


def check(flaws: Collection[str], *, state: str = "sealed") -> frozenset[str]:
    """The active flaws; ValueError for an unknown flaw or a combination that makes no sense."""
    unknown = sorted(set(flaws) - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    active = frozenset(flaws)
    for group in _EXCLUSIVE:
        if len(active & group) > 1:
            raise ValueError(f"flaws {sorted(active & group)} replace the same check; choose one")
    if state != "sealed" and active & STATE_FLAWS:
        clash = sorted(active & STATE_FLAWS)
        raise ValueError(f"--state {state} is its own state handling; it cannot be combined with {clash}")
    if "trusts-identity-header" in active and state != "sealed":
        raise ValueError(f"--state {state} has no SDK boundary for trusts-identity-header to weaken")
    if "trusting-state" in active and active & _LEDGER_FLAWS:
        clash = sorted(active & _LEDGER_FLAWS)
        raise ValueError(f"trusting-state keeps no nonce ledger for {clash} to weaken")
    return active
