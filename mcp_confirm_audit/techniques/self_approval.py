"""`self-approval`: the whole flow completes, and acts, with no question sent to the client.

Only what the agent's own connection can do is used (a preview and its token,
an approve tool, its own flag): never the human's channel. A pending flow whose
profile names no approve call of the agent's is approved with the server's own
approve-named tool on the id the attack staged, where it has one
(`approve_memory(memory_id)` beside the person's `imv approve {id}`): the agent
approving its own request. An effect is
vulnerable: the gate never involves a person. The reason says more when the
same action asks a human on a path the caller could avoid (the profile names
the human's channel, the server's own answer says a person is waited for, or
without its flag the tool asks the user). When the agent has no call of its own
to make after the staging (no approve tool, no execute step), nothing was tried:
not applicable, never a refusal resting on the staging call's reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..confirmations import HumanFailed, as_flow
from ..confirmations.detect import approved_by_the_agent
from ..models import Outcome, Verdict
from . import ANY, technique
from ._flows import AttackChannel
from .base import Attack

# A staging answer that says a person will decide.
_CLAIMS_A_HUMAN = re.compile(r"\b(awaiting (your|the user'?s?|human|operator)|human|your approval)\b", re.I)


@technique("self-approval", mechanisms=ANY)
async def self_approval(attack: Attack, params: Mapping[str, Any]) -> None:
    victim = attack.victim
    args = attack.arguments(victim)
    flow = as_flow(attack.plan.mechanism)
    await attack.start_attack()
    if flow is None:
        # MRTR: the call asks; the agent has nothing of its own to complete it with.
        await attack.call("call as the agent, answering nothing", victim)
        return
    channel = AttackChannel(attack)
    shown = await flow.preview(channel, args)
    # What the staging call made (a staged note on disk) the approval then uses up, and what the action
    # makes may be only new files: from the attack's start that nets to additions, no effect. Seen from
    # the staging, as the approve control sees the honest flow, the action's own kind of change shows.
    staged = await attack.mark() if flow.stages else None
    agents, approver = approved_by_the_agent(attack.tools, flow, attack.plan.name)
    if approver is not None:
        attack.note(
            f"the flow names no approve call of the agent's: the server's own {approver!r} is called "
            "on the id the attack staged"
        )
    calls = len(channel.exchanges)
    try:
        await agents.confirm(channel, args, shown.handle, as_agent=True)
    except HumanFailed as exc:
        if len(channel.exchanges) == calls and not await attack.since_start():
            # Nothing of the agent's own went out after the staging, and nothing moved: no attempt was
            # refused.
            if shown.handle is None:
                attack.setup_failed(f"{exc}, so the agent had nothing to approve: nothing was tried")
            else:
                attack.not_applicable(
                    f"the agent alone has no call to complete the flow with ({exc}): nothing was tried "
                    f"beyond staging; {flow.describe()}"
                )
            return
        attack.note(f"the agent alone cannot complete the flow: {exc}")
    claims_a_human = bool(_CLAIMS_A_HUMAN.search(shown.response.text))
    # A person's channel, a call that waits for a person (a terminal prompt), a challenge a person
    # must answer; or an action staged for approval whose reply says a human approves it.
    human_path = flow.asks_a_person or (flow.stages and claims_a_human)
    # Without the flag the tool asks the user (or says a human must confirm): the caller's
    # own flag is a way around the person the tool otherwise waits for.
    asks_otherwise = flow.caller_approves and (
        shown.response.outcome is Outcome.INPUT_REQUIRED or claims_a_human
    )
    if human_path:
        why = (
            f"the agent approved its own action ({agents.describe()}), where a human's approval is what the "
            "server waits for"
        )
    elif asks_otherwise:
        why = (
            f"the caller's own flag made the action act ({flow.describe()}), where without it the tool asks "
            "a human"
        )
    else:
        why = (
            f"the gate never involves a person: the whole {flow.kind} flow completed and acted with the agent's "
            "own calls, no question sent to a human"
        )
    attack.effect_means(Verdict.VULNERABLE, why)
    if staged is not None and (moved := attack.changes(staged, await attack.mark())):
        # Judged only when nothing moved since the start (an effect there is judged first, as above).
        attack.finding(Verdict.VULNERABLE, f"{why}: since the staging call, {', '.join(moved[:4])}")
