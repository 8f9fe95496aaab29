"""`staged-fields`: what was staged is edited after the person approved it, then committed.

A two-step flow stages an item (an invoice, a transfer), a person approves it,
and the agent commits it. Approval covers the item as it was staged: a server
that lets the staged item's business fields change afterwards must commit
the approved item or refuse. The attack stages the action honestly, has the
person approve it, then changes one business field (the amount, else a
named field) through the target's own tool that edits a staged item, and
commits. Which tool edits is read from the schemas: one that is neither the
action, nor the flow's own, nor read-only, and takes the id the commit
names together with one of the action's own arguments; a name alone never
makes one. An effect holding the edited value is `vulnerable`: what the
person approved is not what was done. The edit refused (the item frozen
once approved), or the commit refused, is the gate holding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models import Outcome
from ..target import arguments as values
from ..target.driver import ToolInfo
from . import ANY, technique
from ._elsewhere import approved, person_flow, redeem
from ._flows import AttackChannel
from .base import Attack


@technique("staged-fields", mechanisms=ANY)
async def staged_fields(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = person_flow(attack, "staged item to edit between the person's approval and the commit")
    if flow is None:
        return
    if not flow.stages:
        attack.not_applicable(f"nothing is staged between the approval and the commit: {flow.describe()}")
        return
    channel, victim = AttackChannel(attack), attack.victim
    args = attack.arguments(victim)
    committed = flow.redemption(args, _PROBE, {})
    id_args = [k for k, v in (committed[1] if committed else {}).items() if v == _PROBE]
    business = {k: v for k, v in args.items() if _scalar(v) and k not in id_args}
    editors = [e for t in attack.tools if (e := _editor(t, attack, flow.own_tools, id_args, business))]
    if not editors:
        attack.not_applicable(
            "no tool edits a staged item: none (but the action and the flow's own, read-only ones left out) "
            f"takes the id the commit names ({', '.join(id_args) or 'none'}) and one of the action's own "
            f"arguments ({', '.join(business) or 'none'})"
        )
        return
    got = await approved(attack, flow, channel, args)
    if got is None:
        return
    handle, saved = got
    # The edits are the attack's first requests (a refused one is what held); the snapshot follows them.
    attack.attack_under_way()
    for tool, id_arg, field in editors:
        new = _changed(field, business[field], tool.input_schema)
        reply = await attack.call(
            f"the staged item's {field} changed after the person approved it: {tool.name}",
            victim,
            tool=tool.name,
            arguments={id_arg: handle, field: new},
        )
        if reply.outcome is Outcome.COMPLETE:
            break
    else:
        # The edit refused: what was approved stays what is staged, and that refusal is the gate's.
        attack.note(f"every edit of the approved item was refused ({', '.join(e[0].name for e in editors)})")
        await attack.start_attack()
        return
    attack.note(
        f"after the person approved {handle[:40]}: {tool.name} set {field} from {business[field]!r} to {new!r}"
    )
    attack.drifted([new])
    await attack.start_attack()
    await redeem(flow, channel, args, handle, saved, "the edited item committed with the person's approval")


_PROBE = "\x00staged-id\x00"


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _editor(
    tool: ToolInfo, attack: Attack, own: tuple[str, ...], id_args: list[str], business: Mapping[str, Any]
) -> tuple[ToolInfo, str, str] | None:
    """The tool, the argument it takes the staged id in and the business field to change; None if it edits none."""
    if tool.name == attack.plan.name or tool.name in own or tool.read_only:
        return None
    props = tool.input_schema.get("properties") or {}
    id_arg = next((a for a in id_args if a in props), None)
    # The amount first: a number changed after approval is the case a person most needs to see.
    fields = sorted(
        (f for f in business if f in props), key=lambda f: not isinstance(business[f], int | float)
    )
    if id_arg is None or not fields:
        return None
    return tool, id_arg, fields[0]


def _changed(field: str, value: Any, schema: Mapping[str, Any]) -> Any:
    """Another valid value of `field`: a number grown tenfold and more, a string of the same shape."""
    if isinstance(value, int | float):
        return value * 10 + 7
    prop = (schema.get("properties") or {}).get(field) or {}
    return values.another(str(value), 1, field, prop) or f"{value}-edited"
