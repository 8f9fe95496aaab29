"""How a server asks before it acts: one module per mechanism, behind one protocol.

`mrtr` (an `input_required` result with a question), `token` (a preview call
returns a token the confirming call echoes, or a challenge a person answers),
`pending` (the call stages an action under an id; another tool, or a human on a
channel of their own, approves or executes it), `flag` (an argument the caller
sets says it was approved) and `waits` (the call waits while a person answers
elsewhere: a terminal prompt). A mechanism is detected from the schemas and the first call's
result (`detect`), or stated in the profile (`profile_keys`); `honest` runs its
controls. Nothing here imports the target or the oracle: a mechanism talks
through a `Channel`, and what it sees is a `Response`.
"""

from __future__ import annotations

from .base import AgentFlow, Channel, HumanFailed, Mechanism, Preview
from .flag import Flag
from .pending import Pending
from .token import Token
from .waits import Waits

__all__ = ["AgentFlow", "Channel", "HumanFailed", "Mechanism", "Preview", "as_flow"]

# Which families run over which mechanism is each family's own trait (`techniques.mrtr_only`).


def as_flow(mechanism: Mechanism | None) -> AgentFlow | None:
    """The mechanism as a flow the harness can drive end to end; None for MRTR (its rounds are the techniques')."""
    return mechanism if isinstance(mechanism, Token | Pending | Flag | Waits) else None
