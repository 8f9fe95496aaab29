"""`policy-self-loosening`: an agent-callable tool changes the gate's rules, then the action acts unasked.

The candidates are the tools whose input schema takes a rule the gate checks (a
limit, threshold, allow-list, category, frame, or a switch of the gate), then
those whose name or description speaks of the gate (confirmation, approval, a
policy, a threshold) and that take a number, a switch or a list, whatever those
are named (`bytes`, `cents`); or the profile's `policy_tools:` (an empty list
turns the family off). On a process of its own (a loosened policy must not leak
into other attacks), each is called in turn with a loosening value for those
arguments: a huge limit, an allow-list of everything the action names, a switch
turned towards "allow". Arguments that name who the rules are for (agent,
principal, user, account) keep the action's own value, never a wildcard or
another identity. After each, the gated action is called plainly, with no
preview, token, flag or answer, its snapshot taken just before: a policy tool is
the one whose call turns asking off, never one by its name, and only the gated
action's effect counts, never the candidate's own change.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..confirmations import as_flow
from ..confirmations.detect import IDENTITY_ARG, READING_TOOL, policy_arguments, policy_tools
from ..target.arguments import value_for
from ..target.driver import ToolInfo
from . import ANY, technique
from .base import Attack

_NONE = (
    "no agent-callable tool changes the gate's rules: none takes a limit, threshold, allow-list or "
    "category in its input schema, and none that speaks of confirmation, approval or a policy takes a "
    "number, a switch or a list (name them with policy_tools:)"
)


@technique("policy-self-loosening", mechanisms=ANY)
async def policy_self_loosening(attack: Attack, params: Mapping[str, Any]) -> None:
    stated = attack.plan.policy_tools
    if stated is not None and not stated:
        attack.not_applicable(
            "turned off by the profile: policy_tools: [] names no tool that changes the gate's rules"
        )
        return
    tools = [t for t in policy_tools(attack.tools, stated) if t.name != attack.plan.name]
    if stated is None:
        tools += [t for t in described(attack) if t not in tools]
    if not tools:
        attack.not_applicable(
            _NONE if stated is None else f"the target offers none of policy_tools: {list(stated)}"
        )
        return
    conn = await attack.peer(attack.peers.other)
    if conn is None:
        return
    victim = await attack.subject_on(conn)  # a handle is minted again on that process
    if victim is None:
        return
    own = attack.arguments(victim)
    for tool in tools:
        await attack.call(
            f"setup: loosen {tool.name}",
            victim,
            arguments=loosening(tool, own, attack.path_value(victim)),
            tool=tool.name,
            connection=conn,
        )
        # Taken again after each candidate: its own change is never the finding, the action's is.
        await attack.start_attack()
        since = await attack.mark()
        await attack.call("the gated action, plainly", victim, connection=conn)
        if await attack.took_effect(victim, since):
            attack.note(f"asking turned off after {tool.name} was called: it is a policy tool")
            return


# A tool that speaks of the gate by its name or description.
_SPEAKS_OF_THE_GATE = re.compile(
    r"confirm|approv|polic(y|ies)|threshold|without (asking|a question|confirmation)|auto.?approv", re.I
)


def described(attack: Attack) -> list[ToolInfo]:
    """Tools that may change the gate's rules by what they say they do: tried, never a finding by their name.

    Not read-only, not named for reading, not destructive, neither the action nor its flow's own
    tools nor another that acts on the same subject; named or described as about confirmation, approval, a policy or a threshold; taking a
    number, a switch or a list (what a rule is set with), whatever it is named.
    """
    flow = as_flow(attack.plan.mechanism)
    own = {attack.plan.name, *(flow.own_tools if flow is not None else ())}
    found = []
    for tool in attack.tools:
        if tool.name in own or tool.read_only is True or tool.destructive is True:
            continue
        if attack.victim.acted_on_by(tool):
            continue  # another action on the same subject (a sibling gated tool), not a rule
        if READING_TOOL.match(tool.name) or not _SPEAKS_OF_THE_GATE.search(f"{tool.name} {tool.description}"):
            continue
        if _rule_arguments(tool):
            found.append(tool)
    return found


def _rule_arguments(tool: ToolInfo) -> list[str]:
    """The arguments a rule is set with, by their type: numbers, switches and lists, not who it is for."""
    props = (tool.input_schema or {}).get("properties") or {}
    found = []
    for name, prop in props.items():
        if not isinstance(prop, Mapping) or IDENTITY_ARG.search(name):
            continue
        kinds = {
            prop.get("type"),
            *(o.get("type") for o in prop.get("anyOf") or () if isinstance(o, Mapping)),
        }
        if kinds & {"integer", "number", "boolean", "array"}:
            found.append(str(name))
    return found


def loosening(tool: ToolInfo, own: Mapping[str, Any], path: str) -> dict[str, Any]:
    """Arguments for a policy tool that loosen its rules for this action, and only name its own identity."""
    schema = tool.input_schema or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    rules = set(policy_arguments(tool)) or set(_rule_arguments(tool))
    values: dict[str, Any] = {}
    for name, prop in props.items():
        prop = prop if isinstance(prop, Mapping) else {}
        if IDENTITY_ARG.search(name):
            identity = _own_identity(name, own)
            if identity is not None:
                values[name] = identity
            elif name in required:
                values[name] = value_for(name, prop)  # the harness's own value, never a wildcard
        elif name in rules:
            values[name] = _loosened(name, prop, own, path)
        elif name in own:
            values[name] = own[name]
        elif name in required:
            values[name] = value_for(name, prop)
    return values


def _own_identity(name: str, own: Mapping[str, Any]) -> Any:
    """The action's own value for `name`, or for the one identity argument it takes."""
    if name in own:
        return own[name]
    return next((v for k, v in own.items() if IDENTITY_ARG.search(k)), None)


# The loosest of an enum's values, best first; else its last.
_PERMISSIVE = ("*", "all", "any", "unlimited", "allow", "auto", "off", "never", "none")


def _loosened(name: str, prop: Mapping[str, Any], own: Mapping[str, Any], path: str) -> Any:
    options = [o for o in prop.get("anyOf") or () if isinstance(o, Mapping) and o.get("type") != "null"]
    if options:
        prop = options[0]
    kind = prop.get("type")
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        choices = {str(c).lower(): c for c in prop["enum"]}
        return next((choices[w] for w in _PERMISSIVE if w in choices), prop["enum"][-1])
    if kind == "boolean":
        # A switch that requires confirmation goes off; one that allows or skips goes on.
        return not name.lower().startswith(("require", "need", "confirm", "approval"))
    if kind in ("integer", "number"):
        most = prop.get("maximum")
        return most if isinstance(most, int | float) else 10**9
    if kind == "array":
        given = prop.get("items")
        items: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        if isinstance(items.get("enum"), list) and items["enum"]:
            return list(items["enum"])
        if items.get("type") in ("integer", "number"):
            return [10**9]
        named = [v for v in own.values() if isinstance(v, str)]
        return list(dict.fromkeys(["*", path, *named]))
    if kind == "object":
        return value_for(name, prop)
    return "*"
