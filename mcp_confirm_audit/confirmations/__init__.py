"""How a server asks before it acts: one module per mechanism, behind one protocol.

`mrtr` (an `input_required` result with a question), `token` (a preview call
returns a token the confirming call echoes), `pending` (the call stages an
action under an id; another tool, or a human on a channel of their own,
approves or executes it) and `flag` (an argument the caller sets says it was
approved). A mechanism is detected from the schemas and the first call's
result (`detect`), or stated in the profile (`profile_keys`); `honest` runs its
controls. Nothing here imports the target or the oracle: a mechanism talks
through a `Channel`, and what it sees is a `Response`.
"""

from __future__ import annotations

from .base import AgentFlow, Channel, HumanFailed, Mechanism, Preview
from .flag import Flag
from .pending import Pending
from .token import Token

__all__ = ["AgentFlow", "Channel", "HumanFailed", "Mechanism", "Preview", "as_flow", "mrtr_only"]


def as_flow(mechanism: Mechanism | None) -> AgentFlow | None:
    """The mechanism as a flow the harness can drive end to end; None for MRTR (its rounds are the techniques')."""
    return mechanism if isinstance(mechanism, Token | Pending | Flag) else None


# Families that judge any mechanism; every other family drives MRTR rounds.
ANY_MECHANISM = frozenset(
    {
        "self-approval",
        "token-forgery",
        "token-replay",
        "token-cross-target",
        "flag-bypass",
        "policy-self-loosening",
        "ungated",
        "capability-downgrade",
    }
)


def mrtr_only(family: str, mechanism: Mechanism | None) -> str | None:
    """Why an MRTR family does not apply to a tool that confirms another way; None if it applies."""
    if mechanism is None or mechanism.kind == "mrtr" or family in ANY_MECHANISM:
        return None
    return f"the tool confirms with a {mechanism.kind} flow, not MRTR input requests: {mechanism.describe()}"
