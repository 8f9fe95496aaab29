"""`subject-drift`: the action names no file, and its subject changes after the question.

The person is asked about one use of the action (a collection and the links it
holds, a staged transfer and its recipient). Then, before the answer, the
profile's `drift:` call changes that subject through the target's own tools (a
link moved into the collection, the recipient edited), as another client or
the agent itself could. The person then accepts what they were shown. The tool
must act on what was shown or ask again: an effect on what the change brought
in (the moved link gone too, a payment to the new recipient) is `vulnerable`,
which the verdict reads from the effect probes. The change is made while a
legacy call waits on its elicitation/create, or between two MRTR rounds; over a
token or pending flow between the preview and the confirming call, and over a
waits flow after the person has read the question and before they answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..confirmations import AgentFlow, HumanFailed, as_flow
from ..engine.action import Instance
from ..models import Outcome
from . import OVER_A_PREVIEW, technique
from ._flows import AttackChannel, previewed
from .base import Attack


@technique("subject-drift", mechanisms=OVER_A_PREVIEW)
async def subject_drift(attack: Attack, params: Mapping[str, Any]) -> None:
    name = attack.plan.name
    if attack.names_file:
        attack.not_applicable(
            f"no drift call applies to {name!r}: it names a file, and a file that changes after the question "
            "is the swap families' (symlink-swap, parent-swap, identity-swap)"
        )
        return
    drift = attack.plan.drift
    if drift is None:
        attack.not_applicable(
            f"no drift call is known for {name!r}: declare drift: {{tool, args}} under the action in the "
            "profile, a call of the target's own tools that changes the subject after the question (moves "
            "an item into it, edits a recipient)"
        )
        return
    victim = attack.use_of_action
    arguments = attack.filled(drift.args, victim)
    shown = _scalars(victim.arguments)
    brought = [v for v in _scalars(arguments) if v not in shown]
    if not brought:
        attack.not_applicable(
            f"the drift call {drift.tool} takes no value the action's own arguments do not: nothing says what "
            "it brings into the subject (give it the saved id of what it moves in, or the new value it sets)"
        )
        return
    if (flow := as_flow(attack.plan.mechanism)) is not None:
        await _over_a_flow(attack, flow, victim, drift.tool, arguments, brought)
        return
    first = await attack.ask(victim)
    if attack.failed:
        return
    if not await _drifted(attack, victim, drift.tool, arguments, brought):
        return
    await attack.start_attack()
    await attack.call(
        "accept, as the person who saw the question would",
        victim,
        state=first.request_state,
        responses=attack.accept(first, victim),
    )


async def _over_a_flow(
    attack: Attack,
    flow: AgentFlow,
    victim: Instance,
    tool: str,
    arguments: Mapping[str, Any],
    brought: list[Any],
) -> None:
    """Between the preview and the confirming call; over a waits flow, after the person read the question."""
    channel, args = AttackChannel(attack), attack.arguments(victim)
    try:
        if flow.waits_for_person:
            changed = False

            async def after_reading() -> None:
                nonlocal changed
                changed = await _drifted(attack, victim, tool, arguments, brought)
                await attack.start_attack()

            attack.attack_under_way()
            await flow.confirm_once_read(channel, args, after_reading)
            if not changed and not attack.failed:
                attack.setup_failed("the call ended before the person was asked, so nothing changed")
            return
        shown = await previewed(attack, flow, channel, args)
        if shown is None or not await _drifted(attack, victim, tool, arguments, brought):
            return
        await attack.start_attack()
        await flow.confirm(channel, args, shown.handle)
    except HumanFailed as exc:
        attack.setup_failed(str(exc))


async def _drifted(
    attack: Attack, victim: Instance, tool: str, arguments: Mapping[str, Any], brought: list[Any]
) -> bool:
    """The profile's drift call, made as another client or the agent could; False (set up wrong) if it failed."""
    changed = await attack.call(
        f"drift: {tool}, the subject changed after the question", victim, tool=tool, arguments=arguments
    )
    if changed.outcome is not Outcome.COMPLETE:
        attack.setup_failed(
            f"the drift call {tool} did not succeed ({changed.outcome}: {changed.text[:200]}); "
            "fix drift: in the profile"
        )
        return False
    attack.note(
        f"after the question, before the answer: {tool}({_json(arguments)}) brought "
        f"{', '.join(_json(v) for v in brought)} into the subject"
    )
    attack.drifted(brought)
    return True


def _scalars(arguments: Mapping[str, Any]) -> list[Any]:
    """The plain values of a call's arguments, in order, once each: a list's items too (`link_ids: [7]`)."""
    out: list[Any] = []
    for value in arguments.values():
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, str | int | float) and not isinstance(item, bool) and item not in out:
                out.append(item)
    return out


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True, sort_keys=True, default=str)
