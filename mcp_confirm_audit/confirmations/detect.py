"""Zero configuration: which mechanism a tool confirms with.

From the schemas first (an argument named like a token is a token flow), then
from the first call's result: a question is MRTR; a pending id (or a status
that says the action waits) is a pending flow, approved and executed by the
server's other tools named for it; a token field is a token flow; an approval
argument the refusal names is a flag. A profile's `confirmation:` wins.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..models import Outcome, Response
from . import values
from .base import Mechanism
from .flag import FLAG_ARG, Flag
from .mrtr import Mrtr, asks
from .pending import ID_FIELD, WAITING, CallTemplate, Pending
from .token import TOKEN_FIELD, Token

if TYPE_CHECKING:
    from ..target.driver import ToolInfo

TOKEN_ARG = re.compile(r"(^|_)token$|^confirm(ation)?_?(code|id|key|token)$|^nonce$", re.I)
PREVIEW_ARG = re.compile(r"^(dry_?run|preview|simulate|plan_?only|what_?if)$", re.I)
APPROVE_TOOL = re.compile(r"approve|authori[sz]e|confirm|accept|grant|allow", re.I)
EXECUTE_TOOL = re.compile(r"execute|run_pending|apply|commit|perform|finali[sz]e|complete|carry_out", re.I)
POLICY_TOOL = re.compile(r"polic|limit|allow_?list|white_?list|threshold|budget|frame|quota|rules?\b", re.I)
_ID_ARG = re.compile(r"(^|_)id$|Id$", re.I)


def _props(tool: ToolInfo) -> Mapping[str, Any]:
    props = (tool.input_schema or {}).get("properties") or {}
    return props if isinstance(props, Mapping) else {}


def _typed(tool: ToolInfo, kind: str, pattern: re.Pattern[str]) -> str | None:
    for name, prop in _props(tool).items():
        types = prop.get("type") if isinstance(prop, Mapping) else None
        options = [x.get("type") for x in prop.get("anyOf", ()) if isinstance(x, Mapping)] if prop else []
        if (types == kind or kind in options) and pattern.search(name):
            return str(name)
    return None


def approval_argument(tool: ToolInfo) -> str | None:
    """A boolean argument of `tool` that claims an approval (`human_approved`, `confirm`)."""
    return _typed(tool, "boolean", FLAG_ARG)


def from_schemas(tool: ToolInfo, stated: Mechanism | None = None) -> Mechanism | None:
    """What the schema alone says (or the profile states); None: the first call must tell."""
    if stated is not None:
        return stated.for_tool(tool.name)
    if (into := _typed(tool, "string", TOKEN_ARG)) is not None:
        preview = _typed(tool, "boolean", PREVIEW_ARG)
        return Token(tool.name, into=into, preview_args={preview: True} if preview else {})
    return None


def from_response(response: Response, tool: ToolInfo, tools: Sequence[ToolInfo]) -> Mechanism | None:
    """What the first call's result says about how the tool confirms; None: nothing known."""
    if asks(response):
        return Mrtr(tool.name)
    if response.outcome not in (Outcome.COMPLETE, Outcome.TOOL_ERROR):
        return None
    staged = values.find(response, None, ID_FIELD)
    status = str(values.fields(response).get("status", ""))
    if staged is not None or WAITING.match(status):
        return Pending(
            tool.name,
            id_from=staged[0] if staged else None,
            approve=_id_tool(tools, APPROVE_TOOL, tool.name),
            execute=_id_tool(tools, EXECUTE_TOOL, tool.name),
        )
    if (token := values.find(response, None, TOKEN_FIELD)) is not None:
        into = _typed(tool, "string", TOKEN_ARG) or token[0]
        return Token(tool.name, into=into, token_from=token[0])
    flag = approval_argument(tool)
    if flag is not None and flag in response.text:
        return Flag(tool.name, arg=flag)
    return None


def _id_tool(tools: Sequence[ToolInfo], name: re.Pattern[str], gated: str) -> CallTemplate | None:
    """Another tool named for the step that takes the pending id, called with it."""
    for other in tools:
        if other.name == gated or other.read_only is True or not name.search(other.name):
            continue
        arg = next((k for k in _props(other) if _ID_ARG.search(k)), None)
        if arg is not None:
            return CallTemplate(other.name, {arg: "{id}"})
    return None


def policy_tools(tools: Sequence[ToolInfo], stated: Sequence[str] = ()) -> list[ToolInfo]:
    """Agent-callable tools that change the gate's rules: the profile's, or named for it."""
    if stated:
        return [t for t in tools if t.name in stated]
    return [
        t
        for t in tools
        if t.read_only is not True and (POLICY_TOOL.search(t.name) or POLICY_TOOL.search(t.description))
    ]
