"""`token`: a preview call returns a token, and only the call that echoes it acts.

`preview` is what makes the first call a preview (`{dry_run: true}`); the
confirming call sends the same arguments with every boolean of the preview
turned over (`dry_run: false`) and the token in `into`. The preview may be another tool with arguments of its own
(`preview_tool`, `preview_call`: a `simulate_impact(operation, target)` whose token
`apply_change` needs), `{NAME}` in them the gated call's argument of that name,
`{tool}` the gated tool. With `human:` the token
is a challenge the person answers first (`{challenge}`, `{token}` in their
steps: a sign command, a link followed): what they save as `evidence` goes into
`into` in its place, and the agent alone has only the challenge. A field of `into:` may
name a field of the preview's reply, `{preview.NAME}` (NAME a field or a dotted path, read
as `from:` reads the token): mcp-changeset's `change_id`, handed out beside the token.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..channels.base import PLACEHOLDER, filled
from ..channels.human import Person
from ..models import Response
from ..target.arguments import made_up, writes
from . import values
from .base import Channel, FlowDefaults, Preview

# A result field that carries the token: `confirm_token`, `token`, `confirmationToken`.
TOKEN_FIELD = re.compile(r"(^|_)token$|Token$|^confirmation_?(code|id)$", re.I)
# A field of the preview's reply named in a field of `into:`: `{preview.change_id}`, `{preview.change.id}`.
# Never a bare name: a bare `{NAME}` is what the person's steps saved, so the two cannot collide.
PREVIEW_FIELD = re.compile(r"\{preview\.([^{}\s]+)\}")


@dataclass(frozen=True, slots=True)
class Token(FlowDefaults):
    tool: str = ""
    into: str = "confirm_token"
    token_from: str | None = None  # None: the first result field named like a token
    preview_args: Mapping[str, Any] = field(default_factory=dict)
    source: str = "detected"
    # The person who answers the challenge, on a channel of their own; None: the token is enough.
    human: Person | None = None
    # Another tool that previews and hands out the token; None: the gated tool itself does.
    preview_tool: str | None = None
    # Its arguments ({NAME}: the gated call's argument, {tool}: the gated tool); None: the gated call's own.
    preview_call: Mapping[str, Any] | None = None
    # Several arguments of the confirming call, each with what it carries ({challenge}, {token}, {id}, a
    # name the person saved); {}: `into` alone carries the token (or the person's evidence).
    fields: Mapping[str, str] = field(default_factory=dict)
    # What each preview answered with its token: by token, with the use it previewed, and by use (the
    # last preview of it). mcp-changeset's `apply_change(change_id, confirmation_token)` needs the
    # `change_id` its preview handed out with the token, and nothing else names it: a flow zero
    # configuration found carries a field back into an argument of that name holding only the harness's
    # filler; a profile names it in `into:` (`{preview.change_id}`). For the use the token was previewed
    # for, its own preview's; for a token that was not (forged, or spent), the last preview of this use's.
    # A use never previewed is previewed when a token is presented for it (`confirm`), for that field
    # alone (zero configuration): its own token is never sent, so another action's token, or a forged
    # one, is checked against a change that exists. Both stores are of the world the previews were made
    # in, and forgotten when a fresh one begins (`forget`).
    staged: dict[str, tuple[str, Response]] = field(default_factory=dict, repr=False, compare=False)
    staged_uses: dict[str, Response] = field(default_factory=dict, repr=False, compare=False)

    @property
    def carries(self) -> tuple[str, ...]:
        """The arguments of the confirming call that carry the token or what the person gave."""
        return tuple(self.fields) or (self.into,)

    @property
    def kind(self) -> str:
        return "token"

    def describe(self) -> str:
        preview = ", ".join(f"{k}={v!r}" for k, v in self.preview_args.items()) or "no extra arguments"
        if self.preview_tool is not None:
            preview = f"the tool {self.preview_tool!r}"
        taken = self.token_from or "a field named like a token"
        said = (
            f"token: a preview ({preview}) returns {taken}; the confirming call carries it in "
            + ", ".join(repr(arg) for arg in self.carries)
        )
        if self.human is not None:
            said += ", once a human answered it on a channel of their own (their evidence in its place)"
        return said

    def for_tool(self, tool: str) -> Token:
        return replace(self, tool=tool)

    @property
    def own_tools(self) -> tuple[str, ...]:
        """Tools that are a step of this flow, not actions of their own: the preview tool."""
        return (self.preview_tool,) if self.preview_tool is not None else ()

    @property
    def own_arguments(self) -> tuple[str, ...]:
        return self.carries

    @property
    def hands_over(self) -> Person | None:
        return self.human

    @property
    def asks_a_person(self) -> bool:
        # A challenge a person answers; a plain token is handed to whoever called.
        return self.human is not None

    @property
    def approves_a_handle(self) -> bool:
        return True

    @property
    def agent_presents_the_handle(self) -> bool:
        return True

    @property
    def token_in_the_call(self) -> bool:
        return True

    @property
    def redemption_carries_the_action(self) -> bool:
        return True  # the confirming call is the action's own, with the token beside its arguments

    @property
    def redeems_the_persons_answer(self) -> bool:
        return self.human is not None

    async def approval(self, channel: Channel, handle: str) -> dict[str, str]:
        if self.human is None:
            return {}
        values = {"id": handle, "challenge": handle, "token": handle}
        return await channel.human("the human answers the challenge", self.human.approve, values)

    def _needs_its_own_preview(self, arguments: Mapping[str, Any]) -> bool:
        """Whether this use was never previewed, and its confirming call takes a field only a preview hands out.

        mcp-changeset's `apply_change(change_id, confirmation_token)` names the change by the id its
        preview handed out, and a use nothing previewed has none: the harness's own value there
        ("unknown change") would be refused before any token is looked at.
        """
        if self.source == "profile" or _use(arguments) in self.staged_uses:
            return False
        handed = {name for reply in self.staged_uses.values() for name in _scalars(reply)}
        return any(k in handed and self._fills(k, v) for k, v in arguments.items())

    def _fills(self, arg: str, value: Any) -> bool:
        """Whether a field a preview handed out may take `arg`'s place: it holds only the harness's
        filler, and neither the token nor what the use writes (its own content, never the preview's)."""
        return made_up(value) and arg not in self.carries and not writes(arg)

    def redemption(
        self, arguments: Mapping[str, Any], handle: str | None, saved: Mapping[str, str]
    ) -> tuple[str, dict[str, Any]] | None:
        # What the person saved (a challenge's answer) is what is redeemed, else the token itself;
        # with two fields (`into:` a mapping), each field from what it names.
        if handle is None:
            return self.tool, self.confirming(arguments, saved.get("evidence", handle))
        return self.tool, self.redeeming(arguments, handle, saved)

    def previewing(self, arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The preview call for a use of the action with `arguments`: (tool, its arguments)."""
        if self.preview_tool is None:
            return self.tool, {**arguments, **self.preview_args}
        if self.preview_call is None:
            return self.preview_tool, dict(arguments)
        values = {**arguments, "tool": self.tool}
        return self.preview_tool, {k: filled(v, values) for k, v in self.preview_call.items()}

    def confirming(
        self, arguments: Mapping[str, Any], token: str | None, saved: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """The confirming call's arguments: the preview switched off, the token in its place.

        With several `fields`, each carries its template filled from the token, what the person
        `saved` and the preview's reply; one that names what is not there (the agent alone has no
        signature, a use never previewed has no reply) is left out.
        """
        off = {k: not v for k, v in self.preview_args.items() if isinstance(v, bool)}
        sent = {**arguments, **off}
        reply = self._preview_of(token, arguments)
        if self.source != "profile" and reply is not None:
            carried = _scalars(reply)
            for arg, value in arguments.items():
                if arg in carried and self._fills(arg, value):
                    sent[arg] = carried[arg]
        if self.fields:
            handed = {"challenge": token, "token": token, "id": token} if token is not None else {}
            known = {**handed, **(saved or {})}
            for arg, template in self.fields.items():
                if set(PLACEHOLDER.findall(template)) <= set(known):
                    with_reply = _from_the_preview(filled(template, known), reply)
                    if with_reply is not None:
                        sent[arg] = with_reply
                    else:
                        # A use never previewed has no reply to name: never the harness's own value instead.
                        sent.pop(arg, None)
        elif token is not None:
            sent[self.into] = token
        return sent

    def redeeming(
        self, arguments: Mapping[str, Any], handle: str, saved: Mapping[str, str]
    ) -> dict[str, Any]:
        """The confirming call with what the person handed over for `handle`: their evidence, or each field."""
        if self.fields:
            return self.confirming(arguments, handle, saved)
        return self.confirming(arguments, saved.get("evidence", handle))

    async def preview(
        self, channel: Channel, arguments: Mapping[str, Any], label: str = "preview"
    ) -> Preview:
        tool, sent = self.previewing(arguments)
        response = await channel.call(label, tool, sent)
        found = self.preview_of(response)
        if found.handle is not None:
            self.staged[found.handle] = (_use(arguments), response)
            self.staged_uses[_use(arguments)] = response
            if missing := self._not_in(response):
                return replace(found, missing=missing)
        return found

    def preview_of(self, response: Response) -> Preview:
        found = Preview.read(response, self.token_from, TOKEN_FIELD)
        if found.handle is None and self.token_from is None:
            # "then call again with confirm=<token>": the preview may hand it back under that very name.
            found = Preview.read(response, self.into, TOKEN_FIELD)
        return found

    def reads_its_preview(self, arguments: Mapping[str, Any]) -> bool:
        if self.source != "profile":
            # Zero configuration's carry-back: an argument a field the preview hands out may fill.
            return any(self._fills(arg, value) for arg, value in arguments.items())
        return any(PREVIEW_FIELD.search(template) for template in self.fields.values())

    def forget(self) -> None:
        # A fresh world: its target never staged what these replies name (mcp-changeset's change ids).
        self.staged.clear()
        self.staged_uses.clear()

    def _preview_of(self, token: str | None, arguments: Mapping[str, Any]) -> Response | None:
        """The preview reply a confirming call for this use with `token` reads: the token's own, if it was
        previewed for this use; else this use's last; None for a use never previewed."""
        this = _use(arguments)
        previewed, reply = self.staged.get(token, ("", None)) if token is not None else ("", None)
        return reply if previewed == this else self.staged_uses.get(this)

    def _not_in(self, reply: Response) -> str | None:
        """What `into:` names of the preview's reply that the reply does not hold, said so it can be fixed."""
        for arg, template in self.fields.items():
            for name in PREVIEW_FIELD.findall(template):
                if values.find(reply, name, TOKEN_FIELD) is None:
                    has = ", ".join(sorted(values.fields(reply))[:8]) or "none"
                    return (
                        f"the preview's reply has no field {name!r}, which into.{arg} names as "
                        f"{{preview.{name}}} (its fields: {has}); name one of them in confirmation.token.into"
                    )
        return None

    async def confirm(
        self,
        channel: Channel,
        arguments: Mapping[str, Any],
        handle: str | None,
        *,
        tool: str | None = None,
        as_agent: bool = False,
    ) -> Response:
        if handle is not None and self._needs_its_own_preview(arguments):
            # A token presented for a use nothing previewed (another use's, a forged one): the change
            # it is presented for is made as the person would see it, and only what names that change
            # goes with the token, never the token this preview hands out.
            await self.preview(channel, arguments, "preview, for the change id the confirming call names")
        if self.human is not None and not as_agent and handle is not None:
            values = {"id": handle, "challenge": handle, "token": handle}
            saved = await channel.human("the human answers the challenge", self.human.approve, values)
            sent = self.redeeming(arguments, handle, saved)
            return await channel.call("confirm with the human's evidence", tool or self.tool, sent)
        return await channel.call(
            "confirm with the token", tool or self.tool, self.confirming(arguments, handle)
        )


def _scalars(reply: Response) -> dict[str, str]:
    """The preview's scalar fields as text (a zero-config flow's carry-back): never a boolean."""
    said = values.fields(reply)
    return {k: str(v) for k, v in said.items() if isinstance(v, str | int) and not isinstance(v, bool)}


def _from_the_preview(template: Any, reply: Response | None) -> Any:
    """`template` with each `{preview.NAME}` the reply's field; None if one is not there to fill it."""
    if not isinstance(template, str) or "{preview." not in template:
        return template
    found = {}
    for name in PREVIEW_FIELD.findall(template):
        got = values.find(reply, name, TOKEN_FIELD) if reply is not None else None
        if got is None:
            return None
        found[name] = got[1]
    return PREVIEW_FIELD.sub(lambda m: found[m.group(1)], template)


def _use(arguments: Mapping[str, Any]) -> str:
    """One use of the action, by its arguments: the same text for the same values."""
    return json.dumps(arguments, sort_keys=True, default=str)
