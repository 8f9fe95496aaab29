"""`token-replay`: the same token, or pending id, presented again after it was used or declined.

After success the victim is put back with the identity it had (a hard link
kept its inode), so only a record of what was spent can refuse.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..confirmations import HumanFailed
from ..confirmations.pending import Pending
from ..oracle.sandbox import identity_of
from . import technique
from ._flows import AttackChannel, flow_or_not_applicable
from .base import Attack


@technique("token-replay")
async def token_replay(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = flow_or_not_applicable(attack, "token or pending id to replay")
    if flow is None:
        return
    if flow.kind == "flag":
        attack.not_applicable(f"nothing to replay: {flow.describe()}")
        return
    channel, victim = AttackChannel(attack), attack.case.victim
    args = attack.arguments(victim)
    shown = await flow.preview(channel, args)
    if shown.handle is None:
        attack.setup_failed(f"the first call returned no token or id ({shown.response.text[:160]})")
        return
    if params["mode"] == "after-success":
        keep = attack.sandbox.keep / attack.case.name
        os.link(victim, keep)
        try:
            done = await flow.confirm(channel, args, shown.handle)
        except HumanFailed as exc:
            attack.setup_failed(str(exc))
            return
        if identity_of(victim) is not None:
            attack.setup_failed(f"the honest confirmation did not take effect ({done.text[:160]})")
            return
        os.link(keep, victim)
        attack.note("victim put back with its original identity after the honest confirmation")
    elif params["mode"] == "after-decline":
        if not isinstance(flow, Pending) or not await flow.decline(channel, shown.handle):
            attack.not_applicable(
                "no way to decline: a pending flow whose profile gives the human's decline command "
                "(confirmation: pending: human: decline: '...{id}...')"
            )
            return
    else:
        raise ValueError(f"token-replay: unknown mode {params['mode']!r}")
    attack.start_attack()
    await flow.confirm(channel, args, shown.handle, as_agent=True)
