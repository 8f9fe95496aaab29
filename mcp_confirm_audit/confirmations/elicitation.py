"""`elicitation`: the server asks over the back channel, in the middle of the call (2025-06-18, 2025-11-25).

The server sends `elicitation/create` while the `tools/call` is open, and the
person's reply decides what the call does. The driver parks such a call at its
question (`target/back_channel.py`), so the techniques answer it exactly as
they answer an MRTR round: everything an MRTR family does between question and
answer happens here while the server really waits. What a legacy connection
cannot express is the state: the question is the server's own request, so the
families that replay, forge or carry a state are not applicable (each says why: its
`needs_state` trait).

The era comes from negotiation: `protocol: auto` lets the SDK discover
(2026-07-28) and fall back to the handshake, and a tool whose call fails on a
2026-07-28 connection for want of a back channel is audited again over a
legacy one. A profile can pin it (`protocol:`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..errors import UsageError
from ..models import Outcome, Response
from .replies import refusal

MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18")
PROTOCOLS = ("auto", MODERN, *LEGACY)


def protocol(value: Any, source: str) -> str:
    """The profile's `protocol:` key: the era every connection asks for."""
    if value is None:
        return "auto"
    text = str(value) if isinstance(value, str | int) else None
    if text not in PROTOCOLS:
        raise UsageError(
            f"profile {source}: protocol: must be one of {', '.join(PROTOCOLS)}, got {value!r}; "
            "auto negotiates (2026-07-28 when the server offers it, else the handshake)"
        )
    return text


def legacy_version(pinned: str) -> str:
    """The handshake version a legacy connection asks for: the pinned one, else the SDK's latest."""
    return pinned if pinned in LEGACY else LEGACY[0]


@dataclass(frozen=True, slots=True)
class Elicitation:
    tool: str = ""
    era: str = LEGACY[0]
    source: str = "detected"

    @property
    def kind(self) -> str:
        return "elicitation"

    def describe(self) -> str:
        return (
            f"elicitation: the server sends elicitation/create during tools/call and acts on the reply "
            f"(protocol {self.era})"
        )

    def for_tool(self, tool: str) -> Elicitation:
        return replace(self, tool=tool)

    @property
    def own_tools(self) -> tuple[str, ...]:
        return ()

    @property
    def own_arguments(self) -> tuple[str, ...]:
        return ()


def needs_back_channel(response: Response) -> bool:
    """A call that failed on a 2026-07-28 connection because the tool asks over a back channel.

    The SDK raises NoBackChannelError (-32600) for `ctx.elicit()` there; a
    framework that catches it says so in a tool error, and a tool that catches it
    itself in an ordinary result that refuses (`"approved": false` quoting the
    SDK's "no back-channel for server-initiated requests").
    """
    if response.outcome not in (Outcome.RPC_ERROR, Outcome.TOOL_ERROR) and refusal(response) is None:
        return False
    text = response.text.lower().replace("back-channel", "back channel")
    return "back channel" in text or "backchannel" in text or (response.code == -32600 and "elicit" in text)
