"""Zero configuration: which tools to attack and how to name a file to them.

A candidate is a tool that is not declared read-only and takes a path-like
string. Whether paths are root-relative or absolute is learned later, from
the honest flow, because a schema rarely says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..confirmations import Mechanism
from ..confirmations.detect import from_schemas
from ..errors import TargetError, UsageError
from ..profile import Profile
from .driver import ToolInfo

_PATHLIKE_NAME = re.compile(r"path|file|target|document|doc\b|dest|src|source|location|uri|name", re.I)
_PATHLIKE_TEXT = re.compile(r"\b(path|file|filename|directory|folder)\b", re.I)
_STRONG_NAME = re.compile(r"path|file", re.I)


@dataclass(frozen=True, slots=True)
class ToolPlan:
    """How to call one tool under attack."""

    name: str
    path_arg: str
    extra_args: Mapping[str, Any] = field(default_factory=dict)
    destructive: bool | None = None
    path_styles: tuple[str, ...] = ("relative", "absolute")
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


def filler(prop: Mapping[str, Any]) -> Any:
    """A harmless value for a required argument that is not the path."""
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return prop["enum"][0]
    if "default" in prop:
        return prop["default"]
    kind = prop.get("type")
    return {"boolean": False, "integer": 0, "number": 0, "array": [], "object": {}}.get(
        str(kind), "mcp-confirm-audit"
    )


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
        candidates = [t for t in tools if t.read_only is not True and path_argument(t) is not None]
    styles = ("relative", "absolute") if profile.paths == "auto" else (profile.paths,)
    plans = []
    for tool in candidates:
        path_arg = profile.path_arg or path_argument(tool)
        if path_arg is None:
            raise UsageError(
                f"{profile.source}: cannot tell which argument of {tool.name!r} is the path; set path_arg"
            )
        props = (tool.input_schema or {}).get("properties") or {}
        required = (tool.input_schema or {}).get("required") or []
        extra = {k: filler(props.get(k) or {}) for k in required if k != path_arg}
        extra.update(profile.extra_args)
        mechanism = from_schemas(tool, profile.confirmation)
        plans.append(
            ToolPlan(tool.name, path_arg, extra, tool.destructive, styles, mechanism, profile.policy_tools)
        )
    if not plans:
        offered = ", ".join(sorted(by_name)) or "none"
        raise TargetError(
            f"the target offers no tool to audit (tools: {offered}); none is both not read-only and takes a "
            "path-like string argument: name one in a profile with 'tool:' and 'path_arg:'"
        )
    return plans


def arguments_for(tool: ToolInfo, path_value: str) -> dict[str, Any]:
    """Arguments for any tool: its path-like argument names the file, the rest are harmless."""
    props = (tool.input_schema or {}).get("properties") or {}
    required = (tool.input_schema or {}).get("required") or []
    args = {k: filler(props.get(k) or {}) for k in required}
    if (path_arg := path_argument(tool)) is not None:
        args[path_arg] = path_value
    return args
