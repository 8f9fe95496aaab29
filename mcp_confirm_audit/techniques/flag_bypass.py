"""`flag-bypass`: a switch of the caller's own makes act an action that otherwise asks or refuses.

Zero configuration: every boolean or enum argument of the gated tool is tried
at each of its values other than the action's own, one call each, the rest of
the action's arguments as they are; so is a plain string argument that decides
what the action does (its name or description says so: `on_links`, a `mode`)
at each value the descriptions list for it (`on_links='delete'|'move'|'cancel'`
in the tool's description, seen on linkwarden-mcp, whose schema says only
`string`). A value with which the tool acts without
asking is an argument that skips the person: a self-attested approval
(`human_approved: true`), a flag that declares the action reversible, an option
that does more (`scope: directory`) without asking again. Whether it acted is
seen through the sandbox and the probes, never read from the reply. A flag
mechanism's own flag is left to self-approval, which judges it.
"""

from __future__ import annotations

import re
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
        skip.update(mechanism.carries)
    info = tool_info(attack)
    victim = attack.victim
    own = attack.arguments(victim)
    tries = switches(info, own, skip) if info is not None else []
    if not tries:
        attack.not_applicable(
            "the tool takes no boolean or enum argument (nor a string whose choices its description lists) "
            "that could skip the person"
        )
        return
    await attack.start_attack()
    for name, value in tries[:MAX_TRIES]:
        since = await attack.mark()
        await attack.call(f"the caller sets {name}: {value!r} itself", victim, arguments={**own, name: value})
        if await attack.took_effect(victim, since):
            attack.note(f"{name}: {value!r}, set by the caller, made the tool act without asking")
            return


def switches(tool: ToolInfo, own: Mapping[str, Any], skip: set[str]) -> list[tuple[str, Any]]:
    """(argument, value) for every switch of the tool at each value the action does not already send.

    A switch is a boolean or enum argument, or a string argument that decides what the action
    does with its choices listed in a description.
    """
    props = (tool.input_schema or {}).get("properties") or {}
    tries: list[tuple[str, Any]] = []
    for name, prop in props.items():
        if name in skip or not isinstance(prop, Mapping):
            continue
        values = _values(prop) or described_choices(name, prop, tool.description or "")
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


# A string argument that decides what the action does: by its name (`on_links`, `if_exists`, a
# `mode`) or its description ("what to do with its links").
_DECIDES = re.compile(
    r"""(?x)^(on|if|when)\b | \b(mode|action|strategy|policy|behaviou?r|cascade|dispos\w*|handling|choice
    |what\ (to\ do|becomes|happens)|how\ to)\b""",
    re.I,
)
# Choices as descriptions list them: quoted and joined by `|`, `/`, commas or "or"; or bare and `|`-joined.
_QUOTED = r"""(?:'[\w-]+'|"[\w-]+"|`[\w-]+`)"""
_CHOICES = (
    rf"""{_QUOTED}(?:\s*(?:\||/|,\s*or\b|,|\bor\b)\s*{_QUOTED})+|[A-Za-z][\w-]*(?:\s*\|\s*[A-Za-z][\w-]*)+"""
)
# At most this many choices of one argument are tried.
_MAX_CHOICES = 6


def described_choices(name: str, prop: Mapping[str, Any], tool_description: str) -> list[str]:
    """The values a plain string argument that decides the action takes, as the descriptions list them.

    Its own description may list them anywhere; the tool's only right after the argument's name
    (`on_links='delete'|'move'|'cancel'`), so a list about another argument is never taken for it.
    """
    if not _plain_string(prop):
        return []
    own = str(prop.get("description") or "")
    if not _DECIDES.search(name.replace("_", " ")) and not _DECIDES.search(own):
        return []
    found = re.search(_CHOICES, own)
    if found is None:
        after_name = rf"\b{re.escape(name)}\b\s*(?:=|:)?\s*(?:(?:is\s+)?one\s+of:?\s*)?({_CHOICES})"
        named = re.search(after_name, tool_description)
        found = named if named is None else re.search(_CHOICES, named.group(1))
    if found is None:
        return []
    text = found.group(0)
    quoted = re.findall(r"""['"`]([\w-]+)['"`]""", text)
    values = quoted or [v.strip() for v in text.split("|")]
    return list(dict.fromkeys(values))[:_MAX_CHOICES]


def _plain_string(prop: Mapping[str, Any]) -> bool:
    """A string with no enum of its own, nullable or not."""
    options = [prop, *(o for o in prop.get("anyOf") or () if isinstance(o, Mapping))]
    return any(o.get("type") == "string" and "enum" not in o and "const" not in o for o in options)
