"""`cross-principal`: one identity's confirmation used by another.

The SDK binds a sealed state to the principal its token verifier authenticated;
a server that keeps its own state, or binds it to an identity the client merely
claims, may not. The victim is the profile's `headers:`; the other identity is
a client of the same process with a principal's headers. It redeems the
victim's fresh state, replays the victim's spent or declined approval, and,
with the victim's identity claim (`identity_header`) beside its own
credentials, redeems the victim's state again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..errors import TargetError
from ..target.driver import Connection
from . import technique
from ._params import Params
from .base import Attack, Unavailable
from .replay import spend_then_replay


class CrossPrincipalParams(Params):
    mode: Literal["after-success", "decline-then-accept", "redeem", "claims-the-victim"]


@technique(
    "cross-principal",
    mechanisms={"mrtr"},
    needs_state=(
        "a legacy question is answered on the connection it was sent over: no state can be handed "
        "to another identity"
    ),
    params=CrossPrincipalParams,
)
async def cross_principal(attack: Attack, params: Mapping[str, Any]) -> None:
    mode = params["mode"]
    other = await _other_identity(attack, victims_claim=mode == "claims-the-victim")
    if other is None:
        return
    if mode in ("after-success", "decline-then-accept"):
        await spend_then_replay(attack, mode, spend_on=attack.primary, replay_on=other)
    elif mode in ("redeem", "claims-the-victim"):
        victim = attack.victim
        first = await attack.ask(victim)
        if attack.failed:
            return
        await attack.start_attack()
        claim = " claiming the victim's identity" if mode == "claims-the-victim" else ""
        await attack.call(
            f"the victim's state redeemed by {other.name}{claim}, accepting",
            victim,
            state=first.request_state,
            responses=attack.accept(first, victim),
            connection=other,
        )
    else:
        raise ValueError(f"cross-principal: unknown mode {mode!r}")


async def _other_identity(attack: Attack, *, victims_claim: bool) -> Connection | None:
    """The other identity's connection; None with the attack not applicable or not set up."""
    try:
        return await attack.peers.principal(victims_claim=victims_claim)
    except Unavailable as exc:
        attack.not_applicable(str(exc))
    except TargetError as exc:
        # Its credentials refused, say: the attack cannot be judged, and says how to fix them.
        attack.setup_failed(str(exc))
    return None
