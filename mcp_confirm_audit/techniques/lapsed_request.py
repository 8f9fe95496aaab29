"""`lapsed-request`: a pending request nobody approved, executed once its lifetime has passed.

A server that fails open at the end of a lifetime ("no answer in time: go ahead") carries out
what the person never approved, or refused. Tested only where the profile says how to shorten
the lifetime (`ttl_flag`, `ttl`): a process with that lifetime is started; an approval redeemed
inside it proves the flow acts there (one that took longer than the lifetime proves nothing and
is tried again); then a request is staged and left unanswered (`mode: unanswered`) or declined
by the person (`mode: declined`), its lifetime waited out, and its execute step called. An
effect, during the wait or at the call, is the finding: the common rule judges it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from . import ROUNDS, technique
from ._elsewhere import person_flow, redeem
from ._flows import AttackChannel, person_declines, previewed
from ._lifetime import InTime, approved_in_time
from ._params import Params
from .base import Attack

# Past the lifetime by this much (and by half the lifetime), as for the other lifetime families.
_MARGIN = 0.3


class LapsedRequestParams(Params):
    # What the person did with the request before its lifetime passed.
    mode: Literal["unanswered", "declined"]


@technique(
    "lapsed-request",
    mechanisms={*ROUNDS, "pending"},
    waits_lifetime=True,
    opens={"short_lived"},
    params=LapsedRequestParams,
)
async def lapsed_request(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = person_flow(attack, "pending request to leave past its lifetime")
    if flow is None:
        return
    if not flow.stages:
        attack.not_applicable(f"the tool stages nothing under an id: {flow.describe()}")
        return
    found = await attack.peer(attack.peers.short_lived)
    if found is None:
        return
    conn, ttl = found
    channel = AttackChannel(attack, conn)
    # The control: an approval redeemed inside the lifetime acts in this process.
    words = InTime(
        label="in-time",
        redeemed="control: executed at once",
        acted="a request approved and executed inside the lifetime",
        steps="approval and execution",
        could="request could be approved and executed",
        why="a slow or loaded machine",
    )
    if not await approved_in_time(attack, flow, channel, conn, ttl, words):
        return
    victim = await attack.subject_on(conn)
    if victim is None:
        return
    args = attack.arguments(victim)
    shown = await previewed(attack, flow, channel, args)
    if shown is None or shown.handle is None:
        return
    if params["mode"] == "declined":
        declined = await person_declines(attack, flow, channel, shown.handle)
        if declined is None:
            return
        if not declined:
            attack.not_applicable(f"the person has no way to decline here ({flow.describe()})")
            return
    # From here on every effect counts: one the server brings about by itself when the lifetime
    # runs out, and one at the execute call after it.
    await attack.start_attack()
    late = ttl + max(_MARGIN, ttl / 2)
    await attack.wait_out(late)
    said = "declined by the person" if params["mode"] == "declined" else "never answered"
    attack.note(
        f"the request was {said}; executed {late:g}s after it was staged, past a lifetime of {ttl:g}s"
    )
    await redeem(flow, channel, args, shown.handle, {}, f"execute the request {said}, after its lifetime")
