"""`flag-bypass`: a switch of the caller's own makes act an action that otherwise asks or refuses.

Zero configuration: every boolean or enum argument of the gated tool is tried
at each of its values other than the action's own, one call each, the rest of
the action's arguments as they are. A value with which the tool acts without
asking is an argument that skips the person: a self-attested approval
(`human_approved: true`), a flag that declares the action reversible, an option
that does more (`scope: directory`) without asking again. Whether it acted is
seen through the sandbox and the probes, never read from the reply. A flag
mechanism's own flag is left to self-approval, which judges it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations.flag import Flag
from ..confirmations.token import Token
from ..target.driver import ToolInfo
from . import technique
from ._flows import tool_info
from .base import Attack

# Calls at most: each value is a round trip of its own.
MAX_TRIES = 12


@technique("flag-bypass")
async def flag_bypass(attack: Attack, params: Mapping[str, Any]) -> None:
    mechanism = attack.plan.mechanism
    skip = {attack.plan.path_arg} if attack.plan.path_arg else set()
    if isinstance(mechanism, Flag):
        skip.add(mechanism.arg)  # the mechanism itself: self-approval judges it
    if isinstance(mechanism, Token):
        skip.add(mechanism.into)
    info = tool_info(attack)
    victim = attack.victim
    own = attack.arguments(victim)
    tries = switches(info, own, skip) if info is not None else []
    if not tries:
        attack.not_applicable("the tool takes no boolean or enum argument that could skip the person")
        return
    await attack.start_attack()
    for name, value in tries[:MAX_TRIES]:
        since = await attack.mark()
        await attack.call(f"the caller sets {name}: {value!r} itself", victim, arguments={**own, name: value})
        if await attack.took_effect(victim, since):
            attack.note(f"{name}: {value!r}, set by the caller, made the tool act without asking")
            return


def switches(tool: ToolInfo, own: Mapping[str, Any], skip: set[str]) -> list[tuple[str, Any]]:
    """(argument, value) for every boolean or enum argument at each value the action does not already send."""
    props = (tool.input_schema or {}).get("properties") or {}
    tries: list[tuple[str, Any]] = []
    for name, prop in props.items():
        if name in skip or not isinstance(prop, Mapping):
            continue
        values = _values(prop)
        if not values:
            continue
        current = own.get(name, prop.get("default", _UNSET))
        away = [v for v in values if v != current or type(v) is not type(current)]
        tries.extend((name, v) for v in away)
    return tries


_UNSET = object()


def _values(prop: Mapping[str, Any]) -> list[Any]:
    """Every value a boolean or enum argument takes (through a nullable anyOf too); [] for any other."""
    for option in (prop, *(o for o in prop.get("anyOf") or () if isinstance(o, Mapping))):
        if isinstance(option.get("enum"), list) and option["enum"]:
            return list(option["enum"])
        if option.get("type") == "boolean":
            return [True, False]
    return []
