r"""The profile's `confirmation:` keys, checked by the models of profile/confirmation_keys.py, as a mechanism.

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
  # mrtr: {human: [{read: {from: sink, json: approve_url}, save: link}, {follow: {link: link}}]}
  # waits: {human: [{terminal: {expect: 'allow\? \[y/N\]', answer: y}}], decline: [...]}
  # flag: {arg: human_approved, value: true}
policy_tools: [set_frame]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from ..channels import human
from ..profile import headers as http_headers
from .base import Mechanism
from .flag import Flag
from .mrtr import Mrtr
from .pending import CallTemplate, Human, Pending
from .token import Token
from .waits import Waits

if TYPE_CHECKING:
    from ..profile.confirmation_keys import (
        CallKeys,
        ConfirmationKeys,
        FlagKeys,
        HumanStepKeys,
        PendingKeys,
        TokenKeys,
        WaitsKeys,
    )


def confirmation(keys: ConfirmationKeys, source: str) -> Mechanism:
    """The mechanism a profile states (for every tool it audits), from its validated keys."""
    where = f"profile {source}: confirmation"
    if keys.kind == "mrtr":
        if keys.mrtr is None:
            return Mrtr(source="profile")
        return Mrtr(
            source="profile", human=human.Person(human.parse_steps(keys.mrtr.human, f"{where}.mrtr.human"))
        )
    if keys.kind == "token":
        return _token(keys.token, dict(keys.preview or {}), where)
    if keys.kind == "waits":
        assert keys.waits is not None  # the model requires it of this kind
        return _waits(keys.waits, where)
    if keys.kind == "pending":
        return _pending(keys.pending, where)
    assert keys.flag is not None  # the model requires it of this kind
    return _flag(keys.flag)


def _token(keys: TokenKeys | None, preview: dict[str, object], where: str) -> Token:
    signer = None
    if keys is not None and keys.human is not None:
        signer = human.Person(human.parse_steps(keys.human, f"{where}.token.human"))
    made_by = keys.preview if keys is not None else None
    into = keys.into if keys is not None else "confirm_token"
    return Token(
        into=into if isinstance(into, str) else next(iter(into)),
        fields=dict(into) if isinstance(into, dict) else {},
        token_from=keys.token_from if keys is not None else None,
        preview_args=preview,
        source="profile",
        human=signer,
        preview_tool=made_by.tool if made_by is not None else None,
        preview_call=dict(made_by.args) if made_by is not None and made_by.args is not None else None,
    )


def _waits(keys: WaitsKeys, where: str) -> Waits:
    approve = human.parse_steps(keys.human, f"{where}.waits.human")
    decline = human.parse_steps(keys.decline, f"{where}.waits.decline") if keys.decline is not None else None
    return Waits(human=human.Person(approve, decline))


def _pending(keys: PendingKeys | None, where: str) -> Pending:
    if keys is None:
        return Pending(source="profile")
    person = None
    if isinstance(keys.human, list):
        declined = keys.decline
        person = Human(
            human.parse_steps(keys.human, f"{where}.pending.human"),
            human.parse_steps(declined, f"{where}.pending.decline") if declined is not None else None,
        )
    elif keys.human is not None:
        said = keys.human
        decline = said.decline
        declined_step: human.HumanStep | None = None
        if isinstance(decline, str):
            declined_step = human.Command(decline)
        elif decline is not None:
            declined_step = _one_step(decline, f"{where}.pending.human.decline")
        person = Human(
            (_one_step(said, f"{where}.pending.human"),),
            (declined_step,) if declined_step is not None else None,
        )
    return Pending(
        id_from=keys.id_from,
        id_pattern=re.compile(keys.id_pattern) if keys.id_pattern is not None else None,
        approve=_call(keys.approve),
        human=person,
        execute=_call(keys.execute),
        source="profile",
    )


def _one_step(keys: HumanStepKeys, where: str) -> human.HumanStep:
    """The old single step: `command:` or `http:` (the model holds it to exactly one)."""
    if keys.command is not None:
        return human.Command(keys.command)
    assert keys.http is not None
    return replace(keys.http.call(f"{where}.http"), server=keys.server)


def _call(keys: CallKeys | None) -> CallTemplate | None:
    return None if keys is None else CallTemplate(keys.tool, dict(keys.args))


def _flag(keys: FlagKeys) -> Flag:
    return Flag(arg=keys.arg, value=keys.value, source="profile")


def human_steps(mechanism: Mechanism | None) -> tuple[human.HumanStep, ...]:
    """The steps a profile gives the person: how they approve, and how they decline if it says."""
    person = getattr(mechanism, "human", None)
    return person.steps if isinstance(person, human.Person) else ()


def _said(step: human.HumanStep) -> str:
    """The text of a step that may name the target's URL: an http step's URL, a command line."""
    if isinstance(step, human.HttpCall):
        return step.url
    return step.line if isinstance(step, human.Command) else ""


def human_headers(mechanism: Mechanism | None) -> tuple[http_headers.Header, ...]:
    """The headers the person's own requests carry: credentials, never shown."""
    steps = human_steps(mechanism)
    return tuple(h for step in steps if isinstance(step, human.HttpCall) for h in step.headers)


def target_url_problem(
    mechanism: Mechanism | None,
    transport: str,
    url: str | None,
    served: Mapping[str, str] | None = None,
    more: tuple[human.HumanStep, ...] = (),
) -> str | None:
    """Why a human's step cannot be sent to `{url}` on this target; None if none names it or it can.

    `served`: with servers:, how each server is reached ("http", "stdio"); a step that names a
    server (`server: post`) goes to that one's base URL, any other to the first's (`transport`).
    """
    named = [s for s in (*human_steps(mechanism), *more) if "{url}" in _said(s)]
    for step in named:
        server = human.server_of(step)
        speaks = (served or {}).get(server, transport) if server is not None else transport
        if speaks != "http":
            whose = (
                f"the base URL of server {server!r}, which speaks {speaks}"
                if server is not None
                else f"the target's base URL, and this target speaks {speaks}"
            )
            return (
                f"confirmation: the person's {step.kind} step names {{url}}, {whose}; serve it over HTTP "
                "({port} in the command) or give the approval endpoint's full loopback URL"
            )
    if not named:
        return None
    if url is not None and (problem := human.loopback_problem(url)):
        return f"confirmation: pending.human names {{url}}, the target's base URL, and {problem}"
    return None
