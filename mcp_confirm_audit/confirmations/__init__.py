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

from . import elicitation
from .base import AgentFlow, Channel, HumanFailed, Mechanism, Preview
from .flag import Flag
from .pending import Pending
from .token import Token
from .waits import Waits

__all__ = ["AgentFlow", "Channel", "HumanFailed", "Mechanism", "Preview", "as_flow", "mrtr_only"]


def as_flow(mechanism: Mechanism | None) -> AgentFlow | None:
    """The mechanism as a flow the harness can drive end to end; None for MRTR (its rounds are the techniques')."""
    return mechanism if isinstance(mechanism, Token | Pending | Flag | Waits) else None


# Families that judge any mechanism; every other family drives MRTR rounds.
ANY_MECHANISM = frozenset(
    {
        "self-approval",
        "approval-replay",
        "approval-transplant",
        "agent-reachable-approval",
        "approval-expiry",
        "approver-identity",
        "approver-substitution",
        "token-forgery",
        "token-replay",
        "token-cross-target",
        "wrong-guess",
        # A waits flow's call sent with nobody answering; not applicable to the other flows.
        "unanswered",
        "flag-bypass",
        "policy-self-loosening",
        "ungated",
        "capability-downgrade",
        # Over a flow, what a person handed over (technique: not applicable where nothing is).
        "double-spend",
    }
)


# Families that also run over a token or pending flow: what the preview showed is what the question
# showed, so a swap between preview and confirm is the same attack (the technique says not_applicable
# when the action names no file, but prompt-forging, whose strings go into the arguments the person
# reads), and so is subject-drift, the same change to a subject that is not a file.
OVER_A_PREVIEW = frozenset(
    {"symlink-swap", "parent-swap", "identity-swap", "out-of-root", "prompt-forging", "subject-drift"}
)
# All of those a waits flow gets too: what the person is shown while the call waits (a terminal
# prompt) is judged, its one call can name a path outside, and the file they were shown can be
# swapped after they read the question and before they say yes.
ON_THE_PERSONS_CHANNEL = OVER_A_PREVIEW
# Of those, the ones that need no preview: a flag flow's one call can still name a path outside.
WITHOUT_A_PREVIEW = frozenset({"out-of-root"})
# Families that still run when the honest flow never completed (the tool never asked, and nothing
# acted): their finding is an effect the attack itself brought about, which needs no honest flow to
# compare with (a caller's own switch that is the only gate). Without an effect they stay inconclusive.
WITHOUT_AN_HONEST_FLOW = frozenset({"flag-bypass", "unanswered"})


def mrtr_only(family: str, mechanism: Mechanism | None) -> str | None:
    """Why an MRTR family does not apply to a tool that confirms another way; None if it applies."""
    if mechanism is not None and mechanism.kind == "elicitation":
        # Asked over the back channel: every family runs, as over MRTR rounds, but those whose
        # attack is the request state itself.
        return elicitation.state_family(family)
    if mechanism is None or mechanism.kind == "mrtr" or family in ANY_MECHANISM:
        return None
    if family in OVER_A_PREVIEW and mechanism.kind in ("token", "pending"):
        return None
    if family in ON_THE_PERSONS_CHANNEL and mechanism.kind == "waits":
        return None
    if family in WITHOUT_A_PREVIEW and mechanism.kind == "flag":
        return None
    if family in OVER_A_PREVIEW and mechanism.kind == "flag":
        return (
            f"a flag flow has no preview: the one call that sets the flag is all there is, so nothing "
            f"is shown to a human and nothing can change between what was shown and what is confirmed "
            f"({mechanism.describe()})"
        )
    return f"the tool confirms with a {mechanism.kind} flow, not MRTR input requests: {mechanism.describe()}"
