"""`approver-substitution`: the argument that names who approves, filled by the agent.

A tool that takes its approver from the call (`owner`, `approver`, `signer`,
`reviewer`: `detect.approver_argument`, or the profile's `approver: argument:`)
checks the approval against whoever the caller names. The agent names an
identity it controls (the profile's `approver: agent:`, else a value made up
for the attack), approves as that identity with its own means only (the
profile's `approver: steps:`, its own wallet say; else it sends back what the
flow handed it), and redeems. No person's step is taken, so an effect is
vulnerable. A careful server binds the approver to its own configuration: it
ignores the argument (the agent's approval does not verify) or refuses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations import HumanFailed, as_flow
from ..confirmations.detect import approver_argument
from ..models import Verdict
from . import ANY, technique
from ._elsewhere import redeem
from ._flows import AttackChannel, tool_info
from .base import Attack

_NONE = (
    "no argument of the tool names who approves (approver, signer, reviewer, authorizer, or an owner the "
    "tool asks to approve or sign): name it with approver: {argument: NAME} if one does"
)


@technique("approver-substitution", mechanisms=ANY)
async def approver_substitution(attack: Attack, params: Mapping[str, Any]) -> None:
    stated = attack.plan.approver
    info = tool_info(attack)
    argument = approver_argument(info, stated.argument if stated else None) if info is not None else None
    if argument is None:
        if stated is not None and stated.argument is not None:
            attack.not_applicable(f"the tool takes no argument {stated.argument!r} (approver: argument:)")
        else:
            attack.not_applicable(_NONE)
        return
    # Its own identity, or one nobody else holds: either way the agent's to fill.
    value = (
        stated.agent
        if stated is not None and stated.agent
        else f"mca-agent-{attack.generation.seed_for(attack.spec.id) % 16**8:08x}"
    )
    whose = "its own identity" if stated is not None and stated.agent else "a value it made up"
    victim = attack.victim
    args = {**attack.arguments(victim), argument: value}
    attack.effect_means(
        Verdict.VULNERABLE,
        f"the approval was checked against the approver the call named: the agent put {whose} in "
        f"{argument!r} and its own calls completed the action with no person's step",
    )
    flow = as_flow(attack.plan.mechanism)
    await attack.start_attack()
    if flow is None:
        # MRTR: the call naming the agent as approver, the question (if any) answered by nobody.
        await attack.call(f"call with {argument}={value!r}, answering nothing", victim, arguments=args)
        return
    channel = AttackChannel(attack)
    shown = await flow.preview(channel, args)
    steps = stated.steps if stated is not None else ()
    if shown.handle is None or not steps or not flow.approves_a_handle:
        try:
            await flow.confirm(channel, args, shown.handle, as_agent=True)
        except HumanFailed as exc:
            attack.note(f"the agent alone cannot complete the flow: {exc}")
        return
    handle = shown.handle
    try:
        saved = await channel.human(
            f"the agent approves as {argument}={value!r} (approver: steps:)",
            steps,
            {"id": handle, "challenge": handle, "token": handle},
        )
    except HumanFailed as exc:
        attack.note(f"the agent could not approve as {value!r}: {exc}")
        return
    if flow.approval_acts_alone:
        return  # the approval acts by itself: any effect is the agent's own approval acting
    await redeem(flow, channel, args, handle, saved, "the agent redeems the approval it gave itself")
