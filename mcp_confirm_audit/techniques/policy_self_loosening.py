"""`policy-self-loosening`: an agent-callable tool changes the gate's rules, then the action acts unasked.

The candidates are the tools whose input schema takes a rule the gate checks (a
limit, threshold, allow-list, category, frame, or a switch of the gate), then
those whose name or description speaks of the gate (confirmation, approval, a
policy, a permission, a threshold) and that take a number, a switch, a list or a
mode, whatever those are named (`bytes`, `cents`); or the profile's `policy_tools:` (an empty list
turns the family off). On a process of its own (a loosened policy must not leak
into other attacks), each is called in turn with a loosening value for those
arguments: a huge limit, an allow-list of everything the action names, a switch
turned towards "allow". A mode, an argument that takes a closed set of values,
is set to each of them in turn (the six most permissive by their words when
there are more), the loosest last: which one loosens is seen from the effect,
never read off a name (host-terminal-mcp's `mode: allowlist | ask | allow_all`
was once sent its first value, which tightens the gate). Arguments that name who
the rules are for (agent, principal, user, account) keep the action's own value,
never a wildcard or another identity. After each call, the gated action is
called plainly, with no preview, token, flag or answer, its snapshot taken just
before: a policy tool is the one whose call turns asking off, never one by its
name, and only the gated action's effect counts, never the candidate's own
change. Where nothing sent could loosen a rule (a tool that takes none, a switch
that names no gate, a mode's own default), the plain call's refusal says nothing
of the policy: not applicable, never refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..confirmations import as_flow
from ..confirmations.detect import (
    IDENTITY_ARG,
    POLICY_ARG,
    READING_TOOL,
    choices,
    policy_arguments,
    policy_tools,
)
from ..target.arguments import value_for
from ..target.driver import ToolInfo
from . import ANY, technique
from .base import Attack

_NONE = (
    "no agent-callable tool changes the gate's rules: none takes a limit, threshold, allow-list or "
    "category in its input schema, and none that speaks of confirmation, approval, a policy or a "
    "permission takes a number, a switch, a list or a mode (name them with policy_tools:)"
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
    loosened = False
    for tool in tools:
        tries = loosenings(tool, own, attack.path_value(victim))
        loosened = loosened or any(could_loosen(tool, sent) for sent in tries)
        for sent in tries:
            await attack.call(
                f"setup: loosen {tool.name}", victim, arguments=sent, tool=tool.name, connection=conn
            )
            # Taken again after each call: the candidate's own change is never the finding, the action's is.
            await attack.start_attack()
            since = await attack.mark()
            await attack.call("the gated action, plainly", victim, connection=conn)
            if await attack.took_effect(victim, since):
                attack.note(f"asking turned off after {tool.name} was called: it is a policy tool")
                return
    if not loosened:
        attack.not_applicable(
            f"nothing sent could loosen a rule: the values sent to {', '.join(t.name for t in tools)} set "
            "no limit or list, turn no switch named for the gate and choose no mode but a default or a strict "
            "one, so the gated action's refusal after them says nothing of the policy"
        )


# A tool that speaks of the gate by its name or description.
_SPEAKS_OF_THE_GATE = re.compile(
    r"confirm|approv|polic(y|ies)|threshold|permission|without (asking|a question|confirmation)|auto.?approv",
    re.I,
)


def described(attack: Attack) -> list[ToolInfo]:
    """Tools that may change the gate's rules by what they say they do: tried, never a finding by their name.

    Not read-only, not named for reading, not destructive, neither the action nor its flow's own
    tools nor another that acts on the same subject; named or described as about confirmation, approval, a
    policy, a permission or a threshold; taking a number, a switch, a list or a mode (what a rule is set
    with), whatever it is named.
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
    """The arguments a rule is set with, by their type: numbers, switches, lists and modes (a closed set of
    values), not who it is for."""
    props = (tool.input_schema or {}).get("properties") or {}
    found = []
    for name, prop in props.items():
        if not isinstance(prop, Mapping) or IDENTITY_ARG.search(name):
            continue
        kinds = {
            prop.get("type"),
            *(o.get("type") for o in prop.get("anyOf") or () if isinstance(o, Mapping)),
        }
        if kinds & {"integer", "number", "boolean", "array"} or len(choices(prop)) > 1:
            found.append(str(name))
    return found


def _rules(tool: ToolInfo) -> list[str]:
    """The arguments of `tool` a loosening sets: its policy arguments, else those a rule is set with."""
    return policy_arguments(tool) or _rule_arguments(tool)


def loosening(tool: ToolInfo, own: Mapping[str, Any], path: str) -> dict[str, Any]:
    """Arguments for a policy tool that loosen its rules for this action, and only name its own identity."""
    schema = tool.input_schema or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    rules = set(_rules(tool))
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


def loosenings(tool: ToolInfo, own: Mapping[str, Any], path: str) -> list[dict[str, Any]]:
    """Every set of arguments to send `tool`, in turn: each other value of a mode, then the loosest of all.

    The last is `loosening`'s (every rule at its loosest): when nothing acts, the plain call's refusal the
    verdict reads is the one after it, never after a value that tightens the gate.
    """
    loosest = loosening(tool, own, path)
    tries: list[dict[str, Any]] = []
    for name in _rules(tool):
        prop = _option(_props(tool).get(name))
        if name not in loosest or not choices(prop):
            continue
        tries += [{**loosest, name: value} for value in _by_looseness(prop)[:-1]]
    tries.append(loosest)
    # The loosest once, last: a mode's other value equal to it (a tie) is not sent before it too.
    return [t for i, t in enumerate(tries) if t not in tries[i + 1 :]]


def could_loosen(tool: ToolInfo, sent: Mapping[str, Any]) -> bool:
    """Whether `sent` sets a rule of `tool` to a value that may loosen it.

    A limit or a list sent, a switch named for the gate turned from its default, a mode set to a value
    other than its default that does not read as strict; never a boolean that names no gate (`persist`).
    """
    props = _props(tool)
    for name in _rules(tool):
        prop = _option(props.get(name))
        if name not in sent or sent[name] == prop.get("default"):
            continue
        if choices(prop):
            if _looseness(sent[name]) >= 0:
                return True
        elif prop.get("type") == "boolean":
            if _NAMES_THE_GATE.search(name):
                return True
        elif prop.get("type") in ("integer", "number", "array") or POLICY_ARG.search(name):
            return True
    return False


# A boolean's name that speaks of the gate: turned from its default, it may loosen it.
_NAMES_THE_GATE = re.compile(
    r"confirm|approv|ask|prompt|allow|skip|bypass|auto|requir|enforc|strict|safe|guard|check|trust|permi|review",
    re.I,
)
# A mode's value, word by word: what loosens the gate, and what keeps or tightens it.
_LOOSE_WORDS = frozenset(
    {
        *("allow", "all", "any", "everything", "unlimited", "auto", "off", "none", "disable", "disabled"),
        *("bypass", "skip", "yolo", "trust", "trusted", "open", "permissive", "unrestricted", "never"),
    }
)
_STRICT_WORDS = frozenset(
    {
        *("ask", "prompt", "confirm", "approve", "approval", "deny", "block", "strict", "manual"),
        *("require", "required", "allowlist", "whitelist", "readonly", "locked", "lock", "enforce"),
    }
)
# Values of a mode tried at most: the most permissive by their words when there are more.
MAX_MODES = 6


def _looseness(value: Any) -> int:
    """How permissive a mode's value reads: its loose words count, its strict ones count against it."""
    text = str(value)
    if text.strip() == "*":
        return 9
    words = re.findall(r"[a-z]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", text).lower())
    loose = sum(w in _LOOSE_WORDS for w in words)
    # "never ask", "no confirm", "skip approval": a strict word after one that negates it is loose.
    negated = re.search(r"(never|no|dont|skip|without)[_ -]?(ask|prompt|confirm|approv)", text, re.I)
    return loose + (2 if negated else -sum(w in _STRICT_WORDS for w in words))


def _by_looseness(prop: Mapping[str, Any]) -> list[Any]:
    """A mode's values to try, the loosest last (ties in the schema's order), at most `MAX_MODES`."""
    values = choices(prop)
    ranked = sorted(range(len(values)), key=lambda i: (_looseness(values[i]), i))
    return [values[i] for i in ranked[-MAX_MODES:]]


def _props(tool: ToolInfo) -> Mapping[str, Any]:
    props = (tool.input_schema or {}).get("properties") or {}
    return props if isinstance(props, Mapping) else {}


def _option(prop: Any) -> Mapping[str, Any]:
    """A property's own schema, the non-null one of a nullable `anyOf`."""
    if not isinstance(prop, Mapping):
        return {}
    options = [o for o in prop.get("anyOf") or () if isinstance(o, Mapping) and o.get("type") != "null"]
    return options[0] if options else prop


def _loosened(name: str, prop: Mapping[str, Any], own: Mapping[str, Any], path: str) -> Any:
    prop = _option(prop)
    kind = prop.get("type")
    if choices(prop):
        return _by_looseness(prop)[-1]
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
