"""The profile's `confirmation:` and `policy_tools:` keys, as models that build the mechanism.

confirmation:
  kind: token                         # mrtr | token | pending | flag
  preview: {dry_run: true}            # token: what makes the first call a preview
  token: {from: confirm_token, into: confirm_token}
  # pending: {id_from: action_id, approve: {tool: approve, args: {action_id: "{id}"}}}
  # pending: {id_from: staged_id, human: {command: "approve-cli {id} approved", decline: "..."},
  #           execute: {tool: execute_pending, args: {pending_id: "{id}"}}}
  # pending: {human: {http: {url: "{url}/approvals/{id}", method: POST, json: {decision: approved},
  #                          headers: {Authorization: "Bearer ${APPROVER_TOKEN}"}},
  #                   decline: {http: {url: "{url}/approvals/{id}", json: {decision: declined}}}}}
  # flag: {arg: human_approved, value: true}
policy_tools: [set_frame]
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Tag, field_validator, model_validator

from ..channels import human
from ..confirmations.base import Mechanism
from ..confirmations.flag import Flag
from ..confirmations.mrtr import Mrtr
from ..confirmations.pending import CallTemplate, Human, Pending
from ..confirmations.token import Token
from . import headers as http_headers
from .contract import Keys, key

KINDS = ("mrtr", "token", "pending", "flag")
_NAME = r"\S"


class TokenKeys(Keys):
    """Where a token flow's token comes from and where the confirming call carries it."""

    token_from: str | None = key(
        None,
        "The result field (or a dotted path into the result, e.g. challenge.nonce) the preview hands the "
        "token out in; unset: the first field named like a token.",
        accepts="a field name or a dotted path",
        example="confirm_token",
        alias="from",
        pattern=_NAME,
    )
    into: str = key(
        "confirm_token",
        "The argument of the confirming call that carries the token.",
        accepts="an argument name",
        example="confirm_token",
        pattern=_NAME,
    )


class CallKeys(Keys):
    """A tool call of a pending flow; string arguments may say {id}, the pending id."""

    tool: str = key(
        ...,
        "The tool to call.",
        accepts="the name of a tool of the target",
        example="execute_pending",
        pattern=_NAME,
    )
    args: dict[str, Any] = key(
        {},
        "Its arguments; {id} in a string is the pending id.",
        accepts="a mapping of argument names to values",
        example={"pending_id": "{id}"},
    )

    server: str | None = key(
        None,
        "With servers:, the server this tool is on (unset: the first server).",
        accepts="the name of one of servers:",
        example="post",
        pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,31}$",
    )

    def template(self) -> CallTemplate:
        return CallTemplate(self.tool, dict(self.args))


class HttpStepKeys(Keys):
    """A request the person's own client sends to an approval endpoint on this machine."""

    url: str = key(
        ...,
        "The approval endpoint: {url} (at its start) is the target's base URL when it is served over HTTP, "
        "{id} the pending id; any fixed URL must be on loopback.",
        accepts="a URL with {id}, or starting with {url}",
        example="{url}/approvals/{id}",
    )
    method: str = key(
        "POST",
        "The request's method.",
        accepts=f"one of {', '.join(human.METHODS)}",
        example="POST",
    )
    body: dict[str, Any] | None = key(
        None,
        "A JSON body; {id} in a string value is the pending id.",
        accepts="a mapping",
        example={"decision": "approved"},
        alias="json",
    )
    headers: dict[str, str] | None = key(
        None,
        "The person's own headers, ${NAME} read from the environment; never shown, and never the agent's.",
        accepts="a mapping of header names to strings",
        example={"Authorization": "Bearer ${APPROVER_TOKEN}"},
        secret=True,
    )

    @field_validator("url")
    @classmethod
    def _on_this_machine(cls, url: str) -> str:
        if problem := human.url_problem(url):
            raise ValueError(f"the url {problem}")
        return url

    @field_validator("method")
    @classmethod
    def _a_method(cls, method: str) -> str:
        if method.upper() not in human.METHODS:
            raise ValueError(f"{method} is no method the harness sends")
        return method

    @model_validator(mode="after")
    def _says_the_id(self) -> HttpStepKeys:
        if "{id}" not in self.url + repr(self.body):
            raise ValueError(
                "must say {id} (in its url or json) where the pending id goes, e.g. {url: '{url}/approvals/{id}'}"
            )
        return self

    def step(self, where: str) -> human.HttpCall:
        sent: tuple[http_headers.Header, ...] = ()
        if self.headers is not None:
            # The person's own credentials, read and redacted as the target's are; never the target's own.
            sent = http_headers.from_mapping(self.headers, source=where, environ=os.environ)
        body = None if self.body is None else dict(self.body)
        return human.HttpCall(self.url, self.method.upper(), body, sent)


class HumanStepKeys(Keys):
    """One thing the person does on a channel of their own: run a command, or send a request."""

    command: str | None = key(
        None,
        "A command line the person runs in the sandbox root ({root}); {id} is the pending id.",
        accepts="a command line with {id} where the pending id goes",
        example="approve-cli {id} approved",
        pattern=r"\{id\}",
    )
    http: HttpStepKeys | None = key(
        None,
        "A request to the approval endpoint.",
        accepts="a mapping with url (and method, json, headers)",
        example={"url": "{url}/approvals/{id}", "json": {"decision": "approved"}},
    )

    @model_validator(mode="after")
    def _one_way(self) -> HumanStepKeys:
        if self.command is not None and self.http is not None:
            raise ValueError("takes 'command' or 'http', not both")
        if self.command is None and self.http is None:
            raise ValueError(
                "needs 'command' (a command line) or 'http' (a request), with {id}, "
                "e.g. {command: 'approve-cli {id} approved'}"
            )
        return self

    def step(self, where: str) -> human.HumanStep:
        if self.http is not None:
            return self.http.step(f"{where}.http")
        assert self.command is not None
        return human.Command(self.command)


def _decline_form(value: Any) -> str:
    return "command" if isinstance(value, str) else "step"


class HumanKeys(HumanStepKeys):
    """How the person approves on a channel of their own, and how they decline."""

    decline: (
        Annotated[
            Annotated[str, Tag("command")] | Annotated[HumanStepKeys, Tag("step")],
            Discriminator(_decline_form),
        ]
        | None
    ) = key(
        None,
        "How the person declines: a command line, or a step of its own ({command: ...} or {http: ...}).",
        accepts="a command line with {id}, or a mapping with command or http",
        example={"http": {"url": "{url}/approvals/{id}", "json": {"decision": "declined"}}},
    )

    @field_validator("decline")
    @classmethod
    def _decline_says_the_id(cls, decline: object) -> object:
        if isinstance(decline, str) and "{id}" not in decline:
            raise ValueError("a command line must say {id} where the pending id goes")
        return decline

    def person(self, where: str) -> Human:
        decline = self.decline
        if isinstance(decline, str):
            decline = HumanStepKeys(command=decline)
        return Human(self.step(where), decline.step(f"{where}.decline") if decline is not None else None)


class PendingKeys(Keys):
    """A pending flow: the call stages the action under an id, someone approves it, maybe a tool then acts."""

    id_from: str | None = key(
        None,
        "The result field that holds the pending id; unset: the first field named like an action id.",
        accepts="a field name",
        example="pending_id",
        pattern=_NAME,
    )
    approve: CallKeys | None = key(
        None,
        "The agent-callable tool that approves (a flaw in itself, audited as one).",
        accepts="a mapping with tool and args",
        example={"tool": "approve", "args": {"action_id": "{id}"}},
    )
    human: HumanKeys | None = key(
        None,
        "How the harness plays the person on a channel of their own.",
        accepts="a mapping with command or http (and decline)",
        example={"command": "approve-cli {id} approved"},
    )
    execute: CallKeys | None = key(
        None,
        "The tool that acts once the pending action is approved.",
        accepts="a mapping with tool and args",
        example={"tool": "execute_pending", "args": {"pending_id": "{id}"}},
    )


class FlagKeys(Keys):
    """The argument the agent sets to say a person approved."""

    arg: str = key(
        ...,
        "The argument that says it was approved.",
        accepts="an argument name",
        example="human_approved",
        pattern=_NAME,
    )
    value: Any = key(True, "The value that says so.", accepts="any value", example=True)


_FOR_KIND = {"token": "token", "pending": "pending", "flag": "flag"}


class ConfirmationKeys(Keys):
    """How the audited tools confirm, when not MRTR or not to be detected."""

    kind: Literal["mrtr", "token", "pending", "flag"] = key(
        ...,
        "The mechanism.",
        accepts=f"one of {', '.join(KINDS)}",
        example="token",
    )
    preview: dict[str, Any] | None = key(
        None,
        "token: the arguments that make the first call a preview.",
        accepts="a mapping of argument names to values",
        example={"dry_run": True},
    )
    token: TokenKeys | None = key(
        None,
        "token: where the token comes from and where it goes.",
        accepts="a mapping with from and into",
        example={"from": "confirm_token", "into": "confirm_token"},
    )
    pending: PendingKeys | None = key(
        None,
        "pending: the id, who approves, and what acts.",
        accepts="a mapping with id_from, approve, human, execute",
        example={
            "id_from": "pending_id",
            "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
        },
    )
    flag: FlagKeys | None = key(
        None,
        "flag: the argument that says a person approved.",
        accepts="a mapping with arg (and value)",
        example={"arg": "human_approved", "value": True},
    )

    @model_validator(mode="after")
    def _keys_of_its_kind(self) -> ConfirmationKeys:
        for name, kind in (("preview", "token"), *_FOR_KIND.items()):
            if getattr(self, name) is not None and self.kind != kind:
                raise ValueError(
                    f"has '{name}', which is for kind {kind}, and kind is {self.kind}; remove one of them"
                )
        if self.kind == "flag" and self.flag is None:
            raise ValueError(
                "of kind flag needs 'flag' with 'arg', the argument that says it was approved, e.g. flag: {arg: human_approved}"
            )
        return self

    def mechanism(self, source: str) -> Mechanism:
        """The mechanism the profile states, for every tool it audits."""
        where = f"profile {source}: confirmation.pending.human"
        if self.kind == "token":
            token = self.token or TokenKeys()
            return Token(
                into=token.into,
                token_from=token.token_from,
                preview_args=dict(self.preview or {}),
                source="profile",
            )
        if self.kind == "pending":
            pending = self.pending or PendingKeys()
            return Pending(
                id_from=pending.id_from,
                approve=pending.approve.template() if pending.approve else None,
                human=pending.human.person(where) if pending.human else None,
                execute=pending.execute.template() if pending.execute else None,
                source="profile",
            )
        if self.kind == "flag":
            assert self.flag is not None
            return Flag(arg=self.flag.arg, value=self.flag.value, source="profile")
        return Mrtr(source="profile")
