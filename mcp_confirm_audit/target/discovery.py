"""Zero configuration: which tools to attack, with what arguments, and where their effect may show.

A candidate is any tool not declared read-only; the approve control tells
whether it asks, acts without asking, or refuses the harness's arguments.
Whether a path is root-relative, absolute, or not a file at all is learned
from the honest flow too, because a schema rarely says. A required argument
another tool returns a field of the same name for is a handle: that tool is
called first. Read-only tools with no required arguments are effect probes
to try around the approve control.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..confirmations import Mechanism
from ..confirmations.detect import from_schemas
from ..confirmations.token import Token
from ..errors import TargetError, UsageError
from ..oracle.effects import ProbeSpec
from ..profile.loader import Profile, SetupCall
from .driver import ToolInfo

_PATHLIKE_NAME = re.compile(r"path|file|target|document|doc\b|dest|src|source|location|uri|name", re.I)
_PATHLIKE_TEXT = re.compile(r"\b(path|file|filename|directory|folder)\b", re.I)
_STRONG_NAME = re.compile(r"path|file", re.I)


@dataclass(frozen=True, slots=True)
class ToolPlan:
    """How to call one tool under attack: the action, and how to see that it happened."""

    name: str
    # The argument that names a case file; None for an action that names none.
    path_arg: str | None
    extra_args: Mapping[str, Any] = field(default_factory=dict)
    destructive: bool | None = None
    # How the honest flow may name the case file; "value" (no file at all) is
    # tried last when the path argument was only guessed.
    path_styles: tuple[str, ...] = ("relative", "absolute")
    setup: tuple[SetupCall, ...] = ()
    # The gated call's arguments ({NAME} from setup, {path}, {sink}); None: the
    # path argument plus harmless values for the rest.
    template: Mapping[str, Any] | None = None
    # Effect probes the profile declares, and read-only tools zero configuration
    # will try around the approve control (those whose result changes are kept).
    probes: tuple[ProbeSpec, ...] = ()
    candidate_probes: tuple[ProbeSpec, ...] = ()
    ignore: tuple[str, ...] = ()
    # Why this plan looks the way it does (a handle found in another tool's output).
    notes: tuple[str, ...] = ()

    def arguments(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The gated call's argument template with everything but setup's names filled in."""
        if self.template is not None:
            return {**self.extra_args, **self.template}
        return dict(self.extra_args)

    # How it confirms, when the profile or the schema says; else the controls find out.
    mechanism: Mechanism | None = None
    # Agent-callable tools that change the gate's rules, as the profile names them.
    policy_tools: tuple[str, ...] = ()


def path_argument(tool: ToolInfo) -> str | None:
    props = (tool.input_schema or {}).get("properties") or {}
    strings = [k for k, v in props.items() if isinstance(v, Mapping) and v.get("type") == "string"]

    def score(key: str) -> int:
        prop = props[key]
        text = f"{prop.get('title', '')} {prop.get('description', '')}"
        return (
            2 * bool(_STRONG_NAME.search(key))
            + bool(_PATHLIKE_NAME.search(key))
            + bool(_PATHLIKE_TEXT.search(text))
        )

    ranked = sorted((k for k in strings if score(k) > 0), key=score, reverse=True)
    return ranked[0] if ranked else None


# Harmless values by format: what a person would type in a test.
_FORMATS = {
    "email": "audit@example.com",
    "uri": "https://example.com/mcp-confirm-audit",
    "url": "https://example.com/mcp-confirm-audit",
    "date": "2026-01-01",
    "date-time": "2026-01-01T00:00:00Z",
    "time": "00:00:00",
    "uuid": "00000000-0000-4000-8000-000000000001",
    "ipv4": "127.0.0.1",
    "hostname": "localhost",
}


def filler(prop: Mapping[str, Any]) -> Any:
    """A schema-valid, harmless value for an argument the harness has no reason to choose.

    What the schema offers first (const, default, examples, enum), then the
    smallest value it allows; numbers are small and positive, never 0, which
    real tools refuse ("amount must be positive") before they ever ask.
    """
    if "const" in prop:
        return prop["const"]
    if "default" in prop:
        return prop["default"]
    if isinstance(prop.get("examples"), list) and prop["examples"]:
        return prop["examples"][0]
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return prop["enum"][0]
    for union in ("anyOf", "oneOf"):
        options = [o for o in prop.get(union) or () if isinstance(o, Mapping) and o.get("type") != "null"]
        if options:
            return filler(options[0])
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind in ("integer", "number"):
        return _number(prop, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "array":
        items = prop.get("items")
        item: Mapping[str, Any] = items if isinstance(items, Mapping) else {}
        return [filler(item) for _ in range(int(prop.get("minItems") or 0))]
    if kind == "object":
        props = prop.get("properties") or {}
        return {k: filler(props.get(k) or {}) for k in prop.get("required") or ()}
    text = _FORMATS.get(str(prop.get("format")), "mcp-confirm-audit")
    least, most = int(prop.get("minLength") or 0), prop.get("maxLength")
    text = text.ljust(least, "x")
    return text[: int(most)] if isinstance(most, int) and most >= least else text


def _number(prop: Mapping[str, Any], *, integer: bool) -> int | float:
    value: float = 1
    if isinstance(prop.get("minimum"), int | float):
        value = max(value, prop["minimum"])
    if isinstance(prop.get("exclusiveMinimum"), int | float) and value <= prop["exclusiveMinimum"]:
        value = prop["exclusiveMinimum"] + 1
    if isinstance(prop.get("maximum"), int | float) and value > prop["maximum"]:
        value = prop["maximum"]
    if isinstance(step := prop.get("multipleOf"), int | float) and step > 0 and value % step:
        value = (value // step + 1) * step
    return int(value) if integer else float(value)


# Read-only tools tried as effect probes around the approve control, at most.
MAX_CANDIDATE_PROBES = 4


def plan_tools(tools: Sequence[ToolInfo], profile: Profile) -> list[ToolPlan]:
    by_name = {t.name: t for t in tools}
    if profile.tool is not None:
        if profile.tool not in by_name:
            raise UsageError(
                f"{profile.source}: tool {profile.tool!r} is not offered by the target; "
                f"it offers: {', '.join(sorted(by_name)) or 'no tools'}"
            )
        candidates = [by_name[profile.tool]]
    else:
        candidates = [t for t in tools if t.read_only is not True]
    for step in profile.setup:
        if step.tool not in by_name:
            raise UsageError(
                f"{profile.source}: setup tool {step.tool!r} is not offered by the target; "
                f"it offers: {', '.join(sorted(by_name)) or 'no tools'}"
            )
    probes_to_try = tuple(
        ProbeSpec("tool", f"tool:{t.name}", {"tool": t.name, "args": {}})
        for t in tools
        if t.read_only is True and not (t.input_schema or {}).get("required")
    )[:MAX_CANDIDATE_PROBES]
    plans = [_plan(tool, tools, profile, probes_to_try) for tool in candidates]
    if not plans:
        offered = ", ".join(sorted(by_name)) or "none"
        raise TargetError(
            f"the target offers no tool to audit (tools: {offered}); every tool is declared read-only: "
            "name one in a profile with 'tool:'"
        )
    return plans


def _plan(
    tool: ToolInfo, tools: Sequence[ToolInfo], profile: Profile, probes_to_try: tuple[ProbeSpec, ...]
) -> ToolPlan:
    props = (tool.input_schema or {}).get("properties") or {}
    required = (tool.input_schema or {}).get("required") or []
    styles = ("relative", "absolute") if profile.paths == "auto" else (profile.paths,)
    template = dict(profile.args) if profile.args is not None else None
    path_arg = profile.path_arg
    if path_arg is None and template is not None:
        path_arg = next((k for k, v in template.items() if isinstance(v, str) and "{path}" in v), None)
    guessed = False
    if path_arg is None and template is None and not profile.setup:
        path_arg, guessed = path_argument(tool), True
    setup: tuple[SetupCall, ...] = profile.setup
    notes: tuple[str, ...] = ()
    if not setup and template is None:
        setup, template, notes = _handles(tool, tools, path_arg)
    named = set(template or {}) | ({path_arg} if path_arg else set())
    extra = {k: filler(props.get(k) or {}) for k in required if k not in named}
    extra.update(profile.extra_args)
    if path_arg is None:
        styles = ("value",)
    elif guessed and profile.tool is None:
        styles = (*styles, "value")
    probes = tuple(profile.effect)
    # A profile that says where the effect shows is taken at its word; only zero configuration learns.
    candidates = () if probes else probes_to_try
    return ToolPlan(
        tool.name,
        path_arg,
        extra,
        tool.destructive,
        styles,
        setup,
        template,
        probes,
        candidates,
        tuple(profile.ignore),
        notes,
        _mechanism(tool, profile, template),
        profile.policy_tools,
    )


def _mechanism(tool: ToolInfo, profile: Profile, template: Mapping[str, Any] | None) -> Mechanism | None:
    """The schema's guess, unless the profile's own arguments already fill the token it guessed.

    A profile that sets `confirmation_token: "{token}"` from a setup call has made the
    preview a setup step: the gated call is the confirming one, and round one says the rest.
    """
    found = from_schemas(tool, profile.confirmation)
    filled = {*(template or {}), *profile.extra_args}
    if profile.confirmation is None and isinstance(found, Token) and found.into in filled:
        return None
    return found


def _handles(
    tool: ToolInfo, tools: Sequence[ToolInfo], path_arg: str | None
) -> tuple[tuple[SetupCall, ...], dict[str, Any] | None, tuple[str, ...]]:
    """A required argument another tool returns a field of that name for: a handle minted by that tool."""
    required = [k for k in (tool.input_schema or {}).get("required") or () if k != path_arg]
    props = (tool.input_schema or {}).get("properties") or {}
    for arg in required:
        if "default" in (props.get(arg) or {}):
            continue
        for other in tools:
            if other.name == tool.name or other.read_only is True:
                continue
            returned = ((other.output_schema or {}).get("properties") or {}).keys()
            if arg in returned:
                fill = arguments_for(other, None)
                step = SetupCall(other.name, fill, {arg: arg})
                note = f"{arg!r} is a handle {other.name!r} returns: called it first (setup:)"
                return (step,), {arg: f"{{{arg}}}"}, (note,)
    return (), None, ()


def arguments_for(tool: ToolInfo, path_value: str | None) -> dict[str, Any]:
    """Arguments for any tool: its path-like argument names the file, the rest are harmless."""
    props = (tool.input_schema or {}).get("properties") or {}
    required = (tool.input_schema or {}).get("required") or []
    args = {k: filler(props.get(k) or {}) for k in required}
    if path_value is not None and (path_arg := path_argument(tool)) is not None:
        args[path_arg] = path_value
    return args
