"""`approval-replay`: what a person handed over (evidence, a signed approval, a followed link) redeemed twice.

The person approves once and the agent redeems it: the action happens. The
victim file is put back with the identity it had (a hard link kept its inode),
so only a record of what was spent can refuse the second redemption, which
the agent makes alone with the same evidence; or (`mode: link`) after the
person's own steps are taken again, the saved approve link followed a second
time, as a person clicking an old link (or anyone holding it) would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from ..confirmations import HumanFailed
from . import ANY, technique
from ._elsewhere import approved, person_flow, redeem
from ._flows import AttackChannel
from ._params import Params
from .base import Attack


class ApprovalReplayParams(Params):
    mode: Literal["link"] | None = Field(
        None, description="link: the person's saved approve link is followed again before the replay"
    )


@technique("approval-replay", mechanisms=ANY, params=ApprovalReplayParams)
async def approval_replay(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = person_flow(attack, "person's approval to replay")
    if flow is None:
        return
    channel, victim = AttackChannel(attack), attack.victim
    args = attack.arguments(victim)
    got = await approved(attack, flow, channel, args)
    if got is None:
        return
    handle, saved = got
    victim.keep()
    since = await attack.mark()
    done = await redeem(flow, channel, args, handle, saved, "the agent redeems the person's approval")
    if not await attack.took_effect(victim, since):
        attack.setup_failed(f"the person's approval, redeemed once, did not take effect ({done.text[:160]})")
        return
    if (put_back := victim.put_back()) is not None:
        attack.note(f"{put_back} after the honest redemption")
    if params.get("mode") == "link":
        # Before the attack proper: what the person's own steps write (a decision file) is theirs.
        person = flow.hands_over
        assert person is not None
        values = {"id": handle, "challenge": handle, "token": handle, **saved}
        try:
            await channel.human("the person's saved approve link followed again", person.approve, values)
        except HumanFailed as exc:
            attack.note(f"following it again was refused on the person's channel: {exc}")
        await attack.start_attack()
        await redeem(flow, channel, args, handle, saved, "redeemed again after the link was followed twice")
        return
    await attack.start_attack()
    await redeem(flow, channel, args, handle, saved, "the same approval redeemed again, the person not asked")
