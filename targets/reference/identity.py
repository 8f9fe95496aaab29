"""Who is calling: bearer tokens verified by the SDK, or (a flaw) a header taken on trust.

`--auth bearer --tokens-env NAME` reads `alice=TOKEN,mallory=TOKEN` from the environment
(never from the command line, which every process listing and every audit report shows)
and hands the SDK a `TokenVerifier` over that table. The SDK's bearer middleware then
refuses requests without a valid token (HTTP 401), and its `RequestStateBoundary` binds
every state it seals to the authenticated principal: one identity's confirmation is
refused, at the boundary, when another presents it.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings

__all__ = [
    "IDENTITY_HEADER",
    "StaticTokens",
    "auth_settings",
    "claimed_identity",
    "parse_tokens",
    "principal",
]

# The header a gateway would set; only the trusts-identity-header flaw reads it.
IDENTITY_HEADER = "X-MCP-User"


class StaticTokens(TokenVerifier):
    """A fixed table of principal name -> token, compared in constant time."""

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._tokens = dict(tokens)

    async def verify_token(self, token: str) -> AccessToken | None:
        for name, known in self._tokens.items():
            if hmac.compare_digest(token.encode(), known.encode()):
                return AccessToken(token=token, client_id=name, scopes=[], subject=name)
        return None


def parse_tokens(text: str) -> dict[str, str]:
    """`alice=TOKEN,mallory=TOKEN`; ValueError (never naming a token) when it is not that."""
    tokens = {}
    for item in text.split(","):
        name, equals, token = item.strip().partition("=")
        if not equals or not name.strip() or len(token.strip()) < 8:
            raise ValueError(
                "tokens must look like alice=TOKEN,mallory=TOKEN, each token 8 characters or more"
            )
        tokens[name.strip()] = token.strip()
    if len(set(tokens.values())) != len(tokens):
        raise ValueError("two principals share a token")
    return tokens


def auth_settings() -> AuthSettings:
    # A resource server only: no authorization server routes, no metadata endpoint.
    return AuthSettings(issuer_url="http://127.0.0.1", resource_server_url=None)


def principal() -> str | None:
    """The principal the SDK authenticated for this request (its token's subject), if any."""
    token = get_access_token()
    return None if token is None else (token.subject or token.client_id)


def claimed_identity(ctx: Any) -> str | None:
    """FLAW trusts-identity-header: the caller is whoever its X-MCP-User header says.

    Plugged into the SDK's own `bind_principal`, so states are bound to a principal the
    client chose: another authenticated client that claims the victim's name passes.
    """
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    claimed = headers.get(IDENTITY_HEADER) if headers is not None else None
    return claimed if isinstance(claimed, str) and claimed else None
