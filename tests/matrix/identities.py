"""Two identities for the bearer-token reference server: alice (the victim) and mallory.

Fresh tokens each session, handed to the server in its environment (never on its
command line, which every report shows) and to the harness as profile headers.
"""

from __future__ import annotations

import secrets
from typing import Any

from mcp_confirm_audit.profile.environment import TargetEnv
from mcp_confirm_audit.profile.headers import Header

ALICE_TOKEN = f"alice-{secrets.token_urlsafe(18)}"
MALLORY_TOKEN = f"mallory-{secrets.token_urlsafe(18)}"
TOKENS_ENV = "MCP_REFERENCE_TOKENS"
IDENTITY_HEADER = "X-MCP-User"
# Reference server options: Streamable HTTP on the harness's port, bearer tokens required.
BEARER = ("--transport", "http", "--port", "{port}", "--auth", "bearer", "--tokens-env", TOKENS_ENV)


def server_env() -> TargetEnv:
    # The tokens are credentials: a secret value, scrubbed from every text kept, as env: marks them.
    return TargetEnv({TOKENS_ENV: f"alice={ALICE_TOKEN},mallory={MALLORY_TOKEN}"}, frozenset({TOKENS_ENV}))


def as_alice(*, with_mallory: bool = True) -> dict[str, Any]:
    """Profile settings: alice's headers on every connection, mallory as the other principal."""
    settings: dict[str, Any] = {
        "env": server_env(),
        "headers": (Header("Authorization", f"Bearer {ALICE_TOKEN}"), Header(IDENTITY_HEADER, "alice")),
        "identity_header": IDENTITY_HEADER,
    }
    if with_mallory:
        mallory = (Header("Authorization", f"Bearer {MALLORY_TOKEN}"), Header(IDENTITY_HEADER, "mallory"))
        settings["principals"] = {"mallory": mallory}
    return settings
