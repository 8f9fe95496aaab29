"""Every use of the `mcp` SDK's private parts, in one place, each checked against the installed SDK.

The harness needs three things the SDK's public API does not offer: a client that declares less
than the SDK would (no elicitation, or URL mode only) or asks for an older handshake version, the
protocol version a connection negotiated, and the SDK's own HTTP client (its timeouts) to hook a
401 on. Each reaches a private name: `Client._build_session`, `ClientSession._build_capabilities`
and `initialize` (replaced per session), `Client._session`, `mcp.shared._httpx_utils`. `PRIVATE_PARTS`
names every one with the parameters the harness relies on, and `changed()` says which the
installed SDK no longer has as used here (`tests/unit/test_sdk_adapter.py` fails on any), so an
SDK release that moves them fails one test, not an audit. pyproject pins the SDK's minor version.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, fields
from typing import Any

import httpx2
from mcp import Client, types
from mcp.client.session import ClientSession
from mcp.shared import _httpx_utils

from ..confirmations.elicitation import LEGACY


@dataclass
class DeclaringClient(Client):
    """A `Client` that declares the elicitation capability it is told to, in the era it is told to.

    The SDK declares form and URL mode when there is an elicitation callback;
    the harness always has one (on a legacy connection a question sent to a
    client that declared none is still seen, and recorded), and `declares`
    narrows what is declared: "url" is URL mode only (a client that cannot
    render a form), "none" no elicitation at all. `handshake` is the version a
    legacy handshake asks for (the SDK asks for its latest, 2025-11-25).
    """

    declares: str = "form+url"
    handshake: str | None = None

    async def _build_session(self, exit_stack: AsyncExitStack) -> Any:
        session = await super()._build_session(exit_stack)
        built = session._build_capabilities
        if self.declares != "form+url":

            def narrowed(version: str) -> types.ClientCapabilities:
                declared = built(version)
                url = types.ElicitationCapability(url=types.UrlElicitationCapability())
                return declared.model_copy(update={"elicitation": url if self.declares == "url" else None})

            session._build_capabilities = narrowed  # type: ignore[method-assign]
        if self.handshake is not None and self.handshake != LEGACY[0]:
            version = self.handshake

            async def initialize() -> types.InitializeResult:
                result = await session.send_request(
                    types.InitializeRequest(
                        params=types.InitializeRequestParams(
                            protocol_version=version,
                            capabilities=session._build_capabilities(version),
                            client_info=self.client_info or types.Implementation(name="mcp", version="0"),
                        ),
                    ),
                    types.InitializeResult,
                )
                session.adopt(result)
                await session.send_notification(types.InitializedNotification())
                return result

            session.initialize = initialize  # type: ignore[method-assign]
        return session


def negotiated_version(client: Client) -> str | None:
    """The protocol version the client's session negotiated; None before it has one."""
    session = getattr(client, "_session", None)
    version = getattr(session, "protocol_version", None)
    return str(version) if version else None


def http_client(headers: dict[str, str]) -> httpx2.AsyncClient:
    """The SDK's own HTTP client (its timeouts and redirects), carrying `headers` on every request."""
    return _httpx_utils.create_mcp_http_client(headers=headers)


# Every private part used above: where it lives, its name, and the parameters relied on.
PRIVATE_PARTS: tuple[tuple[object, str, tuple[str, ...]], ...] = (
    (Client, "_build_session", ("self", "exit_stack")),
    (ClientSession, "_build_capabilities", ("self", "version")),
    (ClientSession, "initialize", ("self",)),
    (ClientSession, "adopt", ("self", "result")),
    (ClientSession, "send_request", ("self", "request", "result_type")),
    (ClientSession, "send_notification", ("self", "notification")),
    (_httpx_utils, "create_mcp_http_client", ("headers", "timeout", "auth")),
)
# Fields of the SDK's `Client` dataclass read here.
PRIVATE_FIELDS = ("_session",)


def changed(parts: tuple[tuple[object, str, tuple[str, ...]], ...] = PRIVATE_PARTS) -> list[str]:
    """The private parts the installed SDK no longer has as this module uses them (empty: all there)."""
    found = []
    for owner, name, parameters in parts:
        where = getattr(owner, "__name__", repr(owner))
        part = getattr(owner, name, None)
        if not callable(part):
            found.append(f"{where}.{name} is gone")
            continue
        have = tuple(_parameters(part))
        if have[: len(parameters)] != parameters:
            found.append(f"{where}.{name} takes ({', '.join(have)}), not ({', '.join(parameters)})")
    names = {f.name for f in fields(Client)}
    found += [f"Client.{name} is no longer a field" for name in PRIVATE_FIELDS if name not in names]
    return found


def _parameters(part: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(part).parameters)
