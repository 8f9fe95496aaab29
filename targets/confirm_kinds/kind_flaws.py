"""The flaw switches of the confirm-kinds server: each removes exactly one defence."""

from __future__ import annotations

from collections.abc import Collection

FLAWS: dict[str, str] = {
    "predictable-token": "the token is a truncated sha256 of the arguments: computable without the preview",
    "predictable-issued-token": "the token is predictable-token's sha256, but only tokens a preview issued are accepted",
    "pipe-joined-token": "the token is sha1 of the '|'-joined argument values, URL-safe base64, cut: computable",
    "defaults-filled-token": "(--binds reason) the token is sha256 of the arguments' JSON with the schema's default filled in",
    "file-hash-joined-token": "the token is sha256 of the path and the file's sha256 joined by '|': computable",
    "deterministic-keyed-token": "the token is an HMAC under the server's secret with no nonce: the same call, the same token",
    "reusable-token": "a token is never spent: it confirms the same action again and again",
    "token-not-bound-to-args": "a token confirms any arguments, not the ones it was previewed for",
    "agent-approval": "an approve tool the agent itself can call stands in for the human's channel",
    "self-attested-flag": "human_approved: true from the caller skips the question",
    "reversible-flag": "reversible: true from the caller (the action can be undone, it says) skips the question",
    "scope-acts-unasked": "scope: directory acts on the file's whole directory at once, with no question",
    "agent-fallback-without-elicitation": "a client that declares no form elicitation gets a pending id it confirms itself",
    "loosening-policy-tool": "set_policy, callable by the agent, raises the size under which nothing is confirmed",
    "ungated-second-tool": "truncate_file acts at once, with no confirmation, beside the gated delete_file",
    # What a token or pending flow does with the file between the preview and the act.
    "no-recheck": "confirming acts on wherever the name leads now, links followed, nothing checked again",
    "no-identity-check": "confirming does not compare the file with the one the preview saw",
    "no-containment": "no inside-the-root check: absolute paths and ../ reach the whole filesystem",
    "preview-before-check": "the preview hands out its token or pending id before checking the path is inside the root",
    "raw-name-in-preview": "the preview's text is a sentence with the file name as it is, not JSON-escaped",
    "preview-without-name": "the preview does not say which file it is about",
    "missing-is-deleted": "a file already gone when confirmed is reported as deleted",
    "lexical-containment": "containment judged on the path as written, no link check; acting follows links",
    "truncates-at-nul": "the path is cut at its first NUL byte (C-string semantics) before any check",
    "wrong-guess-burns": "one wrong token or pending id revokes what is outstanding: any caller can cancel an approval",
    "retry-never-spent": "(--pending-redeem again) an approved request is never spent: every identical call "
    "after the approval acts again",
    "session-wide-approval": "(--pending-key session) an approved session lets any call with its session_id act "
    "once, on whatever that call names, not only the request the person approved",
    "gate-off": "the server's own setting leaves its gate off (as one started in its allow-everything mode): "
    "the staging call acts at once, stages nothing and hands out no pending id",
}
# Which mechanisms each flaw weakens (the policy and the second tool go with any).
_PREVIEWED = ("token", "pending")
MECHANISM_OF: dict[str, tuple[str, ...]] = {
    "predictable-token": ("token",),
    "predictable-issued-token": ("token",),
    "pipe-joined-token": ("token",),
    "defaults-filled-token": ("token",),
    "file-hash-joined-token": ("token",),
    "deterministic-keyed-token": ("token",),
    "reusable-token": ("token",),
    "token-not-bound-to-args": ("token",),
    "agent-approval": ("pending",),
    "gate-off": ("pending",),
    "retry-never-spent": ("pending",),
    "session-wide-approval": ("pending",),
    "self-attested-flag": ("flag",),
    "reversible-flag": ("flag",),
    "scope-acts-unasked": ("flag",),
    "agent-fallback-without-elicitation": ("flag",),
    **{
        f: _PREVIEWED
        for f in (
            "no-recheck",
            "no-identity-check",
            "preview-before-check",
            "raw-name-in-preview",
            "preview-without-name",
            "missing-is-deleted",
            "lexical-containment",
            "truncates-at-nul",
            "wrong-guess-burns",
        )
    },
    # The flag server's own path policy (its flag, or its MRTR question, acts through it).
    "no-containment": (*_PREVIEWED, "flag"),
}
_EXCLUSIVE = (
    # Each makes the token of the call in its own way.
    frozenset(
        {
            "predictable-token",
            "predictable-issued-token",
            "pipe-joined-token",
            "deterministic-keyed-token",
            "defaults-filled-token",
            "file-hash-joined-token",
        }
    ),
    # no-recheck drops the identity comparison along with every other check at confirm time.
    frozenset({"no-recheck", "no-identity-check"}),
    frozenset({"no-containment", "lexical-containment"}),
    frozenset({"raw-name-in-preview", "preview-without-name"}),
)


def check(flaws: Collection[str], mechanism: str) -> frozenset[str]:
    unknown = sorted(set(flaws) - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    wrong = sorted(f for f in flaws if mechanism not in MECHANISM_OF.get(f, (mechanism,)))
    if wrong:
        raise ValueError(f"flaw(s) {wrong} weaken another mechanism than {mechanism}")
    active = frozenset(flaws)
    for group in _EXCLUSIVE:
        if len(active & group) > 1:
            raise ValueError(f"flaws {sorted(active & group)} replace the same check; choose one")
    return active
