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
to make after the staging (no approve tool, no execute step), its own tools that
take the staged id with a closed set of actions are tried on it (apiary-memory's
`manage(action, id)`: `forget` then `restore` confirmed a pending memory): each
action alone, then each ordered pair, on an id staged afresh; an effect is
vulnerable. With no such tool nothing was tried: not applicable, never a refusal
resting on the staging call's reply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Any

from ..confirmations import AgentFlow, HumanFailed, as_flow
from ..confirmations.detect import approved_by_the_agent
from ..models import Outcome, Verdict
from ..target.driver import ToolInfo
from . import ANY, technique
from ._flows import AttackChannel
from .base import Attack

# An argument that takes an id: `id`, `memory_id`, `proposalId`.
_ID_ARGUMENT = re.compile(r"^id$|_id$|[a-z]Id$")
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
                return
            lifecycle = _lifecycle_tools(attack.tools, flow, attack.plan.name)
            if not lifecycle:
                attack.not_applicable(
                    f"the agent alone has no call to complete the flow with ({exc}): nothing was tried "
                    f"beyond staging; {flow.describe()}"
                )
                return
            await _through_its_own_tools(attack, channel, flow, args, shown.handle, lifecycle)
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


# Ordered sequences of a lifecycle tool's actions tried, at most: each is a staging and up to two calls.
MAX_SEQUENCES = 30


@dataclass(frozen=True, slots=True)
class _Lifecycle:
    """An agent-callable tool that takes a staged id and one of a closed set of actions on it."""

    tool: str
    id_argument: str
    action_argument: str
    actions: tuple[str, ...]


def _lifecycle_tools(tools: Sequence[ToolInfo], flow: AgentFlow, gated: str) -> list[_Lifecycle]:
    """The agent's tools that take the pending id (by the flow's id field, `id`, or `*_id`) and an action."""
    named = {name.rsplit(".", 1)[-1] for name in (getattr(flow, "id_from", None) or "",) if name}
    found = []
    for tool in tools:
        if tool.name == gated or tool.read_only is True:
            continue
        props = tool.input_schema.get("properties") or {}
        ids = [
            n for n, p in props.items() if _of_type(p, "string") and (n in named or _ID_ARGUMENT.search(n))
        ]
        closed = [(n, _closed(p)) for n, p in props.items() if n not in ids and _closed(p)]
        required = set(tool.input_schema.get("required") or ())
        if len(ids) == 1 and len(closed) == 1 and closed[0][1] and required <= {ids[0], closed[0][0]}:
            found.append(_Lifecycle(tool.name, ids[0], closed[0][0], closed[0][1]))
    return found


def _branches(prop: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A property's schema and the branches of its `anyOf` (an optional argument is `anyOf [T, null]`)."""
    return [prop, *(b for b in prop.get("anyOf") or () if isinstance(b, Mapping))]


def _of_type(prop: Mapping[str, Any], kind: str) -> bool:
    return any(branch.get("type") == kind for branch in _branches(prop))


def _closed(prop: Mapping[str, Any]) -> tuple[str, ...]:
    """The string values a property's `enum` allows (inside a nullable `anyOf` too), or ()."""
    for branch in _branches(prop):
        if isinstance(branch.get("enum"), list):
            return tuple(v for v in branch["enum"] if isinstance(v, str))
    return ()


async def _through_its_own_tools(
    attack: Attack,
    channel: AttackChannel,
    flow: AgentFlow,
    args: Mapping[str, Any],
    handle: str,
    lifecycle: Sequence[_Lifecycle],
) -> None:
    """Each action of the agent's lifecycle tools on a staged id, alone and in ordered pairs, until one acts.

    A pending entry its agent may `forget` and then `restore` as confirmed memory is approved by nobody:
    the person's approval was the only way the action was meant to take effect.
    """
    sequences = [
        (tool, combo)
        for tool in lifecycle
        for combo in [*((a,) for a in tool.actions), *permutations(tool.actions, 2)]
    ][:MAX_SEQUENCES]
    attack.effect_means(
        Verdict.VULNERABLE,
        "the agent's own tools made the action take effect with nobody asked, where a human's approval is what "
        f"the server waits for ({flow.describe()})",
    )
    for number, (tool, combo) in enumerate(sequences):
        if number:
            handle = (await flow.preview(channel, args)).handle or handle  # a fresh staging for each sequence
        for action in combo:
            await attack.call(
                f"the agent's own {tool.tool}: {action} on the staged id",
                attack.victim,
                tool=tool.tool,
                arguments={tool.action_argument: action, tool.id_argument: handle},
            )
        if await attack.since_start():
            attack.note(f"{tool.tool}: {' then '.join(combo)} on the staged id {handle!r} made the effect")
            return
    attack.note(
        f"{len(sequences)} sequence(s) of {', '.join(t.tool for t in lifecycle)}'s actions on a staged id: none "
        "made the effect"
    )
