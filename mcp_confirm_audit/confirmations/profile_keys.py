r"""The profile's `confirmation:` and `policy_tools:` keys, checked, with one-line errors.

confirmation:
  kind: token                         # mrtr | token | pending | flag
  preview: {dry_run: true}            # token: what makes the first call a preview
  token: {from: confirm_token, into: confirm_token}
  # token: {preview: {tool: simulate_impact, args: {change: "{change_id}"}}}   # the preview is another tool
  # pending: {id_from: action_id, approve: {tool: approve, args: {action_id: "{id}"}}}
  # pending: {id_from: staged_id, human: {command: "approve-cli {id} approved", decline: "..."},
  #           execute: {tool: execute_pending, args: {pending_id: "{id}"}}}
  # pending: {human: {http: {url: "{url}/approvals/{id}", method: POST, json: {decision: approved},
  #                          headers: {Authorization: "Bearer ${APPROVER_TOKEN}"}},
  #                   decline: {http: {url: "{url}/approvals/{id}", json: {decision: declined}}}}}
  # pending: {id_from: request_id, human: [{read: {from: sink, json: approve_url}, save: link},
  #                                        {follow: {link: link, method: POST}}],
  #           decline: [...], execute: {tool: confirm, args: {request_id: "{id}", evidence: "{evidence}"}}}
  # token: {from: challenge, into: approval_token, human: [{sign: {command: "signer {challenge}"}}]}
  # waits: {human: [{terminal: {expect: 'allow\? \[y/N\]', answer: y}}], decline: [...]}
  # flag: {arg: human_approved, value: true}
policy_tools: [set_frame]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..channels import human
from ..errors import UsageError
from ..profile import headers as http_headers
from .base import Mechanism
from .flag import Flag
from .mrtr import Mrtr
from .pending import CallTemplate, Human, Pending
from .token import Token
from .waits import Waits

KINDS = ("mrtr", "token", "pending", "flag", "waits")
_KEYS = {"kind", "preview", "token", "pending", "flag", "waits"}


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
        _only(token, {"from", "into", "human", "preview"}, "token", fail)
        into = _name(token.get("into", "confirm_token"), "token.into", fail)
        taken = token.get("from")
        signer = None
        if (steps := token.get("human")) is not None:
            signer = human.Person(human.parse_steps(steps, "token.human", fail, source))
        preview_tool, preview_call = None, None
        if (made_by := token.get("preview")) is not None:
            made_by = _mapping(made_by, "token.preview", fail)
            _only(made_by, {"tool", "args"}, "token.preview", fail)
            preview_tool = _name(made_by.get("tool"), "token.preview.tool", fail)
            if (args := made_by.get("args")) is not None:
                preview_call = dict(_mapping(args, "token.preview.args", fail))
        return Token(
            into=into,
            token_from=_name(taken, "token.from", fail) if taken is not None else None,
            preview_args=dict(preview),
            source="profile",
            human=signer,
            preview_tool=preview_tool,
            preview_call=preview_call,
        )
    if kind == "waits":
        waits = _mapping(value.get("waits") or {}, "waits", fail)
        _only(waits, {"human", "decline"}, "waits", fail)
        if waits.get("human") is None:
            raise fail(
                "waits needs human: the steps the person takes while the call waits, e.g. "
                "[{terminal: {expect: 'allow\\? \\[y/N\\]', answer: y}}]"
            )
        approve = human.parse_steps(waits["human"], "waits.human", fail, source)
        decline = waits.get("decline")
        return Waits(
            human=human.Person(
                approve,
                human.parse_steps(decline, "waits.decline", fail, source) if decline is not None else None,
            )
        )
    if kind == "pending":
        pending = _mapping(value.get("pending") or {}, "pending", fail)
        _only(pending, {"id_from", "approve", "human", "decline", "execute"}, "pending", fail)
        person = None
        if isinstance(said := pending.get("human"), list):
            approve_steps = human.parse_steps(said, "pending.human", fail, source)
            declined = pending.get("decline")
            person = Human(
                approve_steps,
                human.parse_steps(declined, "pending.decline", fail, source)
                if declined is not None
                else None,
            )
        elif pending.get("decline") is not None:
            raise fail(
                "pending.decline goes with a list of human: steps; with the old human: {command: ...}, give human.decline"
            )
        elif said is not None:
            said = _mapping(said, "pending.human", fail)
            _only(said, {"command", "http", "decline"}, "pending.human", fail)
            one = _human_step(said, "pending.human", fail, source)
            if one is None:
                raise fail("pending.human needs 'command' (a command line) or 'http' (a request), with {id}")
            decline = said.get("decline")
            if isinstance(decline, str):
                decline = {"command": decline}
            elif decline is not None:
                decline = _mapping(decline, "pending.human.decline", fail)
                _only(decline, {"command", "http"}, "pending.human.decline", fail)
            declined_step = _human_step(decline, "pending.human.decline", fail, source) if decline else None
            person = Human((one,), (declined_step,) if declined_step is not None else None)
        id_from = pending.get("id_from")
        execute = _call(pending.get("execute"), "pending.execute", fail)
        if execute is not None:
            saved = human.saved_names(person.approve) if person is not None else ()
            human_check = ("id", *saved)
            for arg, sent in execute.args.items():
                if isinstance(sent, str):
                    human.check_names(sent, human_check, f"pending.execute.args.{arg}", fail)
        return Pending(
            id_from=_name(id_from, "pending.id_from", fail) if id_from is not None else None,
            approve=_call(pending.get("approve"), "pending.approve", fail),
            human=person,
            execute=execute,
            source="profile",
        )
    flag = _mapping(value.get("flag") or {}, "flag", fail)
    _only(flag, {"arg", "value"}, "flag", fail)
    if "arg" not in flag:
        raise fail("flag needs 'arg', the argument that says it was approved (e.g. {arg: human_approved})")
    return Flag(arg=_name(flag["arg"], "flag.arg", fail), value=flag.get("value", True), source="profile")


def human_steps(mechanism: Mechanism | None) -> tuple[human.HumanStep, ...]:
    """The steps a profile gives the person: how they approve, and how they decline if it says."""
    person = getattr(mechanism, "human", None)
    return person.steps if isinstance(person, human.Person) else ()


def human_headers(mechanism: Mechanism | None) -> tuple[http_headers.Header, ...]:
    """The headers the person's own requests carry: credentials, never shown."""
    steps = human_steps(mechanism)
    return tuple(h for step in steps if isinstance(step, human.HttpCall) for h in step.headers)


def target_url_problem(mechanism: Mechanism | None, transport: str, url: str | None) -> str | None:
    """Why a human's step cannot be sent to `{url}` on this target; None if none names it or it can."""
    named = [s for s in human_steps(mechanism) if isinstance(s, human.HttpCall) and "{url}" in s.url]
    if not named:
        return None
    if transport != "http":
        return (
            f"confirmation: pending.human names {{url}}, the target's base URL, and this target speaks {transport}; "
            "serve it over HTTP ({port} in the command) or give the approval endpoint's full loopback URL"
        )
    if url is not None and (problem := human.loopback_problem(url)):
        return f"confirmation: pending.human names {{url}}, the target's base URL, and {problem}"
    return None


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


def _human_step(said: Mapping[str, Any] | None, where: str, fail: Any, source: str) -> human.HumanStep | None:
    """`command:` or `http:` of a human's step (exactly one), checked; None if it names neither."""
    if said is None:
        return None
    if "command" in said and "http" in said:
        raise fail(f"{where} takes 'command' or 'http', not both")
    if "command" in said:
        command = said["command"]
        if not isinstance(command, str) or "{id}" not in command:
            raise fail(f"{where}.command must be a command line with {{id}} where the pending id goes")
        return human.Command(command)
    if "http" not in said:
        return None
    key = f"{where}.http"
    call = _mapping(said["http"], key, fail)
    _only(call, {"url", "method", "json", "headers"}, key, fail)
    url = call.get("url")
    if not isinstance(url, str) or not url:
        raise fail(f"{key}.url must be the approval endpoint's URL, e.g. '{{url}}/approvals/{{id}}'")
    if problem := human.url_problem(url):
        raise fail(f"{key}.url {problem}")
    method = call.get("method", "POST")
    if not isinstance(method, str) or method.upper() not in human.METHODS:
        raise fail(f"{key}.method must be one of {', '.join(human.METHODS)}, got {method!r}")
    body = call.get("json")
    if body is not None:
        body = dict(_mapping(body, f"{key}.json", fail))
    if "{id}" not in url + repr(body):
        raise fail(f"{key} must say {{id}} (in its url or json) where the pending id goes")
    sent: tuple[http_headers.Header, ...] = ()
    if (raw := call.get("headers")) is not None:
        # The person's own credentials, read and redacted as the target's are; never the target's own.
        sent = http_headers.from_mapping(
            raw, source=f"profile {source}: confirmation: {key}", environ=os.environ
        )
    return human.HttpCall(url, method.upper(), body, sent)
