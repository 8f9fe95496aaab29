"""Checks on a URL-mode elicitation's URL: what it must not carry (MCP 2026-07-28, Safe URL Handling).

"Servers MUST NOT include sensitive information about the end-user, including
credentials, personally identifiable information, etc., in the URL." A URL is
read as the client sees it before the person consents: its userinfo, the names
of its query and fragment parameters, e-mail addresses anywhere in it, and the
values the person's own browser carries (a session cookie) found in it. Values
are never quoted back: a finding names where, not what.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, unquote, urlsplit

from ..models import Verdict
from .prompt_checks import Finding, escaped

# Parameter names that carry a credential or the person's identity.
_SENSITIVE_NAME = re.compile(
    r"(?i)^(?:pass(?:word|wd|phrase)?|pwd|secret|client_secret|token|access_token|id_token|refresh_token|"
    r"api[_-]?key|apikey|session(?:_?id)?|sid|auth|authorization|credentials?|bearer|jwt|otp|"
    r"e-?mail|mail|phone|ssn|card(?:_?number)?|cvv|iban|dob|birth_?date)$"
)
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
# A credential shorter than this is not looked for (it would match by chance).
_SHORTEST_SECRET = 8


def secrets_of(values: Iterable[str]) -> set[str]:
    """What of a header value could turn up in a URL: the whole value and each `name=value`'s value."""
    found: set[str] = set()
    for value in values:
        for part in (value, *re.split(r"[;,\s]+", value)):
            piece = part.partition("=")[2] if "=" in part else part
            for candidate in (part, piece):
                if len(candidate) >= _SHORTEST_SECRET:
                    found.add(candidate)
    return found


def url_user_data(url: str, secrets: Iterable[str] = ()) -> list[Finding]:
    """What in `url` is sensitive information about the person (each a MUST NOT: vulnerable)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [(Verdict.VULNERABLE, f"the URL is not a valid URL: {escaped(url[:200])}")]
    findings: list[Finding] = []
    if parts.username is not None or parts.password is not None:
        findings.append((Verdict.VULNERABLE, "the URL carries credentials in its userinfo (user:password@)"))
    for where, text in (("query", parts.query), ("fragment", parts.fragment)):
        for name, _ in parse_qsl(text, keep_blank_values=True):
            if _SENSITIVE_NAME.match(name.strip()):
                findings.append(
                    (
                        Verdict.VULNERABLE,
                        f"the URL's {where} has a parameter {escaped(name)}, named for the person's data",
                    )
                )
    readable = unquote(url)
    # Past the host: the userinfo is judged above, and an address there is not a second finding.
    if _EMAIL.search(unquote(f"{parts.path}?{parts.query}#{parts.fragment}")):
        findings.append((Verdict.VULNERABLE, "the URL carries an e-mail address"))
    if any(secret in readable or secret in url for secret in secrets):
        findings.append((Verdict.VULNERABLE, "the URL carries a credential the person's own browser holds"))
    return findings
