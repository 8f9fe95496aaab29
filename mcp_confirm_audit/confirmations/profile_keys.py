"""The profile's `confirmation:` and `policy_tools:` keys, checked, with one-line errors.

confirmation:
  kind: token                         # mrtr | token | pending | flag
  preview: {dry_run: true}            # token: what makes the first call a preview
  token: {from: confirm_token, into: confirm_token}
  # pending: {id_from: action_id, approve: {tool: approve, args: {action_id: "{id}"}}}
  # pending: {id_from: staged_id, human: {command: "approve-cli {id} approved", decline: "..."},
  #           execute: {tool: execute_pending, args: {pending_id: "{id}"}}}
  # flag: {arg: human_approved, value: true}
policy_tools: [set_frame]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import UsageError
from .base import Mechanism
from .flag import Flag
from .mrtr import Mrtr
from .pending import CallTemplate, Human, Pending
from .token import Token

KINDS = ("mrtr", "token", "pending", "flag")
_KEYS = {"kind", "preview", "token", "pending", "flag"}


def confirmation(value: Any, source: str) -> Mechanism | None:
    """The mechanism a profile states (for every tool it audits), or None."""
    if value is None:
        return None

    def fail(message: str) -> UsageError:
        return UsageError(f"profile {source}: confirmation: {message}")

    if not isinstance(value, Mapping):
        raise fail("must be a mapping with 'kind' (one of mrtr, token, pending, flag)")
    unknown = sorted(set(value) - _KEYS)
    if unknown:
        raise fail(f"unknown key {unknown[0]!r}; known keys: {', '.join(sorted(_KEYS))}")
    kind = value.get("kind")
    if kind not in KINDS:
        raise fail(f"'kind' must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "mrtr":
        return Mrtr(source="profile")
    if kind == "token":
        preview = _mapping(value.get("preview") or {}, "preview", fail)
        token = _mapping(value.get("token") or {}, "token", fail)
        _only(token, {"from", "into"}, "token", fail)
        into = _name(token.get("into", "confirm_token"), "token.into", fail)
        taken = token.get("from")
        return Token(
            into=into,
            token_from=_name(taken, "token.from", fail) if taken is not None else None,
            preview_args=dict(preview),
            source="profile",
        )
    if kind == "pending":
        pending = _mapping(value.get("pending") or {}, "pending", fail)
        _only(pending, {"id_from", "approve", "human", "execute"}, "pending", fail)
        human = None
        if (said := pending.get("human")) is not None:
            said = _mapping(said, "pending.human", fail)
            _only(said, {"command", "decline"}, "pending.human", fail)
            command = said.get("command")
            if not isinstance(command, str) or "{id}" not in command:
                raise fail("pending.human.command must be a command line with {id} where the pending id goes")
            decline = said.get("decline")
            if decline is not None and (not isinstance(decline, str) or "{id}" not in decline):
                raise fail("pending.human.decline must be a command line with {id}")
            human = Human(command, decline)
        id_from = pending.get("id_from")
        return Pending(
            id_from=_name(id_from, "pending.id_from", fail) if id_from is not None else None,
            approve=_call(pending.get("approve"), "pending.approve", fail),
            human=human,
            execute=_call(pending.get("execute"), "pending.execute", fail),
            source="profile",
        )
    flag = _mapping(value.get("flag") or {}, "flag", fail)
    _only(flag, {"arg", "value"}, "flag", fail)
    if "arg" not in flag:
        raise fail("flag needs 'arg', the argument that says it was approved (e.g. {arg: human_approved})")
    return Flag(arg=_name(flag["arg"], "flag.arg", fail), value=flag.get("value", True), source="profile")


def policy_tools(value: Any, source: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise UsageError(f"profile {source}: 'policy_tools' must be a list of tool names, got {value!r}")
    return tuple(value)


def _mapping(value: Any, key: str, fail: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise fail(f"{key} must be a mapping, got {value!r}")
    return value


def _only(value: Mapping[str, Any], keys: set[str], where: str, fail: Any) -> None:
    unknown = sorted(set(value) - keys)
    if unknown:
        raise fail(f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(keys))}")


def _name(value: Any, key: str, fail: Any) -> str:
    if not isinstance(value, str) or not value:
        raise fail(f"{key} must be an argument or field name, got {value!r}")
    return value


def _call(value: Any, key: str, fail: Any) -> CallTemplate | None:
    if value is None:
        return None
    call = _mapping(value, key, fail)
    _only(call, {"tool", "args"}, key, fail)
    tool = call.get("tool")
    if not isinstance(tool, str) or not tool:
        raise fail(f"{key}.tool must name a tool of the target")
    return CallTemplate(tool, dict(_mapping(call.get("args") or {}, f"{key}.args", fail)))
