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

With `beyond: true` each switch is set with a value beyond the profile's in
one other string argument (a recipient the profile never names): a gate
that holds for the profile's own values may let the switch widen what it
allows (an allow-list that `human_approved: true` skips). The value alone,
no switch set, is sent first and must not act: a value the tool takes
without asking is not the switch's doing, and is left out.

It also runs when the honest flow never completed (the tool never asks: no
channel configured, and no flag was detected): the action's own call first,
which must not act, then each switch. A switch that makes it act is then the
only gate (vulnerable); nothing acting stays inconclusive.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from ..models import Verdict
from ..target.driver import ToolInfo
from . import ANY, technique
from ._flows import tool_info
from ._params import Params
from .base import Attack

# Calls at most: each value is a round trip of its own.
MAX_TRIES = 12


# Values beyond the profile's tried at most, one per string argument.
MAX_BEYOND = 3
# An argument that names a handle (set up, or found): a value beyond it names nothing at all.
_HANDLE = re.compile(r"(^|_)(id|ids|uuid|key|handle|ref)$", re.I)


class FlagBypassParams(Params):
    beyond: bool = Field(
        False, description="each switch set together with a value beyond the profile's in another argument"
    )


@technique("flag-bypass", mechanisms=ANY, without_an_honest_flow=True, params=FlagBypassParams)
async def flag_bypass(attack: Attack, params: Mapping[str, Any]) -> None:
    mechanism = attack.plan.mechanism
    skip = {attack.plan.path_arg} if attack.plan.path_arg else set()
    if mechanism is not None:
        skip.update(mechanism.own_arguments)  # the mechanism itself: self-approval judges it
    if attack.honest_flow_failed is not None and attack.names_file and attack.plan.path_arg is None:
        # No honest flow showed how the action is named (a value action, set up by no control).
        attack.setup_failed(f"the honest flow never completed ({attack.honest_flow_failed})")
        return
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
    if params.get("beyond"):
        widened = await _beyond(attack, info, own, skip | {name for name, _ in tries})
        if widened is None:
            return
        combined = [(name, value, wider) for wider in widened for name, value in tries]
    else:
        combined = [(name, value, {}) for name, value in tries]
    await attack.start_attack()
    if attack.honest_flow_failed is not None:
        # No honest flow to compare with (the tool never asked): the call with no switch must not act,
        # or a switch's effect would be the tool's own.
        if await _acted_unswitched(attack, "the action's own call, no switch set", own):
            attack.setup_failed("the tool acted with no switch set: no switch of the caller's made it act")
            return
        attack.effect_means(
            Verdict.VULNERABLE, "a switch the caller set is the only gate: the tool acted on it"
        )
    for name, value, wider in combined[:MAX_TRIES]:
        since = await attack.mark()
        beyond = "".join(f", with {k}: {v!r}, beyond the profile's" for k, v in wider.items())
        await attack.call(
            f"the caller sets {name}: {value!r} itself{beyond}",
            victim,
            arguments={**own, **wider, name: value},
        )
        if await attack.took_effect(victim, since):
            attack.note(f"{name}: {value!r}, set by the caller{beyond}, made the tool act without asking")
            return


async def _beyond(
    attack: Attack, info: ToolInfo | None, own: Mapping[str, Any], skip: set[str]
) -> list[dict[str, Any]] | None:
    """One value beyond the profile's per plain string argument, each checked not to act alone; None: none."""
    props = (info.input_schema if info is not None else {}).get("properties") or {}
    template = attack.plan.arguments({})
    candidates = [
        (name, f"{value}-beyond")
        for name, value in own.items()
        if name not in skip
        and isinstance(value, str)
        and _plain_string(props.get(name) or {"type": "string"})
        # A value beyond the profile's is a free one (a recipient), not a handle: another id names nothing.
        and not _HANDLE.search(name)
        and "{" not in str(template.get(name, ""))
    ][:MAX_BEYOND]
    if not candidates:
        attack.not_applicable(
            "no argument but the switches, the path and handles takes a string value the profile gives, so "
            "nothing can be sent beyond the profile's values"
        )
        return None
    kept: list[dict[str, Any]] = []
    for name, value in candidates:
        # Before the attack proper: this is the tool's own answer to the value, no switch set.
        if await _acted_unswitched(
            attack, f"{name}: {value!r}, beyond the profile's, no switch set", {**own, name: value}
        ):
            attack.note(f"{name}: {value!r} acted with no switch set: the tool takes it unasked, left out")
            continue
        kept.append({name: value})
    if not kept:
        attack.setup_failed("every value beyond the profile's acted with no switch set: no switch is needed")
        return None
    return kept


async def _acted_unswitched(attack: Attack, label: str, arguments: Mapping[str, Any]) -> bool:
    """Whether a call with no switch set acted; with no honest flow, the files it only grew are bookkeeping.

    With no honest flow there is no bookkeeping learned by the controls, and a
    server that logs every call (asked, refused or staged) changes its log on
    this call too: a file that only grew on a call that must not act is that log,
    learned as bookkeeping (`Attack.learn_grown`) before anything is judged, so
    neither this call nor a switch's counts it as an effect.
    """
    if attack.honest_flow_failed is None:
        since = await attack.mark()
        await attack.call(label, attack.victim, arguments=arguments)
        return await attack.took_effect(attack.victim, since)
    since, held = await attack.mark(), attack.root_files()
    await attack.call(label, attack.victim, arguments=arguments)
    attack.learn_grown(held, f"grew on a call with no switch set ({label}), as on every call: bookkeeping")
    return await attack.took_effect(attack.victim, since)


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
