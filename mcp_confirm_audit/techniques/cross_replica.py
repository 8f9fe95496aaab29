"""`cross-replica`: one approval, several processes of the target behind one root.

Behind a load balancer round two may land on another replica than round one.
Replicas that share request-state keys must share the single-use record too,
or an approval spent on one is fresh on the next; replicas with keys of their
own refuse each other's approvals outright, which is safe but breaks honest
users (fail-closed). Mint here and redeem there; spend here and replay there
(every replay variant); redeem on all of them at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from . import technique
from ._params import Params
from ._race import redeem_together
from .base import Attack
from .replay import spend_then_replay


class CrossReplicaParams(Params):
    mode: Literal[
        "mint-here-redeem-there", "together", "after-success", "decline-then-accept", "cancel-then-accept"
    ]


@technique(
    "cross-replica",
    mechanisms={"mrtr"},
    needs_state=(
        "a legacy question lives in one process's open call: there is no state another replica could redeem"
    ),
    premise_asked=True,
    opens={"replicas"},
    params=CrossReplicaParams,
)
async def cross_replica(attack: Attack, params: Mapping[str, Any]) -> None:
    replicas = await attack.peer(attack.peers.replicas)
    if replicas is None:
        return
    here, there = replicas[0], replicas[1]
    mode = params["mode"]
    if mode == "mint-here-redeem-there":
        # The honest case first: is the approval accepted on the other replica, once?
        await redeem_together(attack, here, [there], if_none_taken="fail-closed")
    elif mode == "together":
        count = max(attack.peers.redemptions, len(replicas))
        spread = [replicas[i % len(replicas)] for i in range(count)]
        await redeem_together(attack, here, spread)
    elif mode in ("after-success", "decline-then-accept", "cancel-then-accept"):
        await spend_then_replay(attack, mode, spend_on=here, replay_on=there)
    else:
        raise ValueError(f"cross-replica: unknown mode {mode!r}")
