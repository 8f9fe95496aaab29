"""One destructive tool that asks first: hand-rolled MRTR around a path policy and a state scheme.

Round 1 checks the path and returns an `InputRequiredResult` with a form and a state;
round 2 reads the answer, redeems the state (spending its nonce), checks the file again
and acts on it beneath a directory descriptor. `delete_file` and `truncate_file` are two
instances of this class sharing one policy and one state scheme.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

import anyio
import anyio.to_thread
import approve_link
import forms
import paths
import prompt
import race_gate
import states
import styles
from capabilities import require_form_elicitation
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    InputResponse,
)

__all__ = ["CONFIRM_KEY", "ConfirmTool", "Effect"]

CONFIRM_KEY = "confirm"
_SANITISER_FLAWS: dict[str, prompt.Sanitiser] = {
    "unsanitised-question": "none",
    "sanitiser-keeps-bidi": "keeps-bidi",
    "sanitiser-folds-controls": "folds-controls",
    "sanitiser-category-only": "category-only",
}
Effect = Literal["delete", "truncate"]

log = logging.getLogger("mcp_confirm_reference")


def event(kind: str, **fields: object) -> None:
    """One line per security event on stderr (stdout is the protocol); %r keeps it one line."""
    log.info("%s %s", kind, " ".join(f"{key}={value!r}" for key, value in fields.items()))


@dataclass(frozen=True, slots=True)
class Answer:
    action: str
    content: Mapping[str, Any] | None
    empty_means_yes: bool = False  # only duck-typed-answers reads a missing content as yes


class ConfirmTool:
    def __init__(
        self,
        name: str,
        effect: Effect,
        path_arg: str,
        policy: paths.PathPolicy,
        scheme: states.Scheme,
        form: forms.FormKind,
        flaws: frozenset[str],
        style: styles.Style = styles.STYLES["quoted"],
        race: race_gate.RaceGate | None = None,
        links: approve_link.Links | None = None,
    ) -> None:
        self.name = name
        self.effect = effect
        self._path_arg = path_arg
        self._policy = policy
        self._scheme = scheme
        self._form = form
        self._flaws = flaws
        self._style = style
        # FLAW check-then-delete-ledger: the redemptions the ledger let through act one at a time.
        self._race = race
        self._turn = anyio.Lock()
        # --approve-link: the person approves each question by a link posted to a webhook.
        self._links = links

    async def __call__(self, raw: object, ctx: Context) -> str | InputRequiredResult:
        try:
            return await self._round(raw, ctx)
        except (paths.Refused, forms.BadAnswer) as exc:
            event("refused", tool=self.name, path=raw, reason=str(exc))
            raise ToolError(str(exc)) from None

    async def _round(self, raw: object, ctx: Context) -> str | InputRequiredResult:
        call = self._call(ctx)
        links = self._links
        if links is not None and links.decides and ctx.request_state is not None and ctx.input_responses:
            return await self._decided_by_the_link(raw, call, ctx.request_state, ctx.input_responses)
        answer = self._answer(ctx.input_responses or {})
        if answer is None:
            return await self._ask(raw, call, ctx)
        if ctx.request_state is None:  # the SDK also maps `requestState: null` to None
            if "stateless-answers" in self._flaws:
                return await self._act(raw, answer, None)  # FLAW stateless-answers
            event("answer-without-state-ignored", tool=self.name, path=raw)
            return await self._ask(raw, call, ctx)
        # A decline or cancel closes the question (its state spent below); only an accept waits for the link.
        accepts = self._read(answer).action == "accept"
        if self._links is not None and accepts and not self._links.approved(ctx.request_state):
            event("not-approved-elsewhere", tool=self.name, path=raw)
            raise ToolError("refused: not approved yet: the person has not followed the link sent to them")
        approval = await self._scheme.redeem(ctx.request_state, call)
        if self._race is None or not accepts:  # a decline acts on nothing: it waits for no file
            return await self._act(raw, answer, approval)
        async with self._turn:
            # Each in its turn, once the file is back (the harness puts it back after every effect).
            await anyio.to_thread.run_sync(self._race.until, lambda: self._there(raw))
            return await self._act(raw, answer, approval)

    async def _decided_by_the_link(
        self, raw: object, call: states.Call, state: str, responses: Mapping[str, InputResponse]
    ) -> str:
        """--link-decides: the person's link approves; the in-band answer may only close the question."""
        assert self._links is not None
        given = responses.get(CONFIRM_KEY)
        closing = isinstance(given, ElicitResult) and given.action != "accept"
        if not closing and not self._links.approved(state):
            event("not-approved-elsewhere", tool=self.name, path=raw)
            raise ToolError("refused: not approved yet: the person has not followed the link sent to them")
        approval = await self._scheme.redeem(state, call)
        if closing:
            assert isinstance(given, ElicitResult)
            event("not-confirmed", tool=self.name, path=raw, action=given.action)
            return self._style.not_confirmed(self.effect, given.action)
        return await self._act(raw, ElicitResult(action="accept"), approval)

    def _there(self, raw: object) -> bool:
        try:
            self._policy.resolve(raw)
        except paths.Missing:
            return False
        except paths.Refused:
            return True  # refused for another reason: nothing to wait for
        return True

    def _call(self, ctx: Context) -> states.Call:
        # The wire arguments, extras included: the tool's signature would drop an added `force`.
        params = ctx.request_context.params or {}
        arguments = params.get("arguments")
        return states.Call(self.name, arguments if isinstance(arguments, Mapping) else {}, self._path_arg)

    def _answer(self, responses: Mapping[str, InputResponse]) -> InputResponse | None:
        if "any-answer-key" in self._flaws:
            return next(iter(responses.values()), None)  # FLAW any-answer-key: any key will do
        return responses.get(CONFIRM_KEY)

    async def _ask(self, raw: object, call: states.Call, ctx: Context) -> InputRequiredResult:
        cannot_answer = False
        try:
            require_form_elicitation(ctx.client_capabilities)
        except MCPError:
            cannot_answer = True
            # FLAW elicits-without-capability (and no-answer-is-yes): asks anyway.
            if not self._flaws & {"elicits-without-capability", "no-answer-is-yes"}:
                event("refused", reason="client declared no form elicitation")
                raise
        # FLAW ask-before-check: containment is left to round 2, after the user was asked.
        try:
            if "unlinks-the-name" in self._flaws:
                target = self._policy.entry(raw)  # FLAW unlinks-the-name: a link is an entry like a file
            else:
                target = self._policy.resolve(raw, check_containment="ask-before-check" not in self._flaws)
        except paths.Refused as exc:
            if self._style.input_refused is None:
                raise
            raise paths.Refused(self._style.input_refused(raw, exc)) from None
        shown = prompt.shown_name(
            target.rel,
            sanitiser=self._sanitiser(),
            truncate="end" if "sanitiser-truncates-end" in self._flaws else "middle",
            escaping=self._style.escaping,
        )
        named = "question-without-name" not in self._flaws
        request = ElicitRequest(
            params=ElicitRequestFormParams(
                mode="form",
                message=self._style.question(shown, self._form, self.effect, named),
                requested_schema=forms.schema(self._form, **self._form_flaws()),
            )
        )
        state = await self._scheme.mint(call, target)
        if self._links is not None:
            await anyio.to_thread.run_sync(self._links.post, state, request.params.message)
        event("asked", tool=self.name, path=target.rel)
        if cannot_answer and "no-answer-is-yes" in self._flaws:
            # FLAW no-answer-is-yes: a client that cannot answer the form is not waited for.
            self._apply(target, None)
        return InputRequiredResult(input_requests={CONFIRM_KEY: request}, request_state=state)

    def _sanitiser(self) -> prompt.Sanitiser:
        for flaw, sanitiser in _SANITISER_FLAWS.items():
            if flaw in self._flaws:
                return sanitiser
        return "careful"

    def _form_flaws(self) -> dict[str, bool]:
        return {"ask_secret": "asks-for-secret" in self._flaws, "nested": "nested-form" in self._flaws}

    async def _act(self, raw: object, response: InputResponse, approval: states.Approval | None) -> str:
        answer = self._read(response)
        if answer.action != "accept" and "decline-as-accept" not in self._flaws:
            event("not-confirmed", tool=self.name, path=raw, action=answer.action)
            return self._style.not_confirmed(self.effect, answer.action)
        if "no-recheck" in self._flaws or "unlinks-the-name" in self._flaws:
            return self._act_unchecked(raw, answer)  # FLAW no-recheck, unlinks-the-name
        try:
            target = self._policy.resolve(raw)  # every round-1 check again, on today's filesystem
        except paths.Missing:
            if "missing-is-deleted" not in self._flaws:
                raise
            # FLAW missing-is-deleted: gone is as good as deleted, whoever deleted it.
            event("deleted", tool=self.name, path=raw, size=0)
            return self._style.done(self.effect, self._shown(str(raw)), 0)
        # FLAW decline-as-accept: any other action skips the form.
        if answer.action == "accept" and not self._approves(answer, PurePosixPath(target.rel).name):
            event("not-confirmed", tool=self.name, path=target.rel, action="accept")
            return self._style.not_confirmed(self.effect, "keep")
        return self._apply(target, self._expected(target, approval))

    def _act_unchecked(self, raw: object, answer: Answer) -> str:
        """FLAW no-recheck (the name followed as it is now), unlinks-the-name (the name unlinked as it is now):
        the checks of round 1 are trusted."""
        assert isinstance(raw, str)  # round 1 checked it (the SDK typed it)
        if answer.action == "accept" and not self._approves(answer, PurePosixPath(raw).name):
            return self._style.not_confirmed(self.effect, "keep")
        kind = "deleted" if self.effect == "delete" else "truncated"
        if "unlinks-the-name" in self._flaws:
            size = paths.act_on_name(self._policy.root, raw, self.effect)
            event(kind, tool=self.name, path=raw, size=size)
            return self._style.done(self.effect, self._shown(raw), size)
        acted = paths.follow_and_act(self._policy.root, raw, self.effect)
        event(kind, tool=self.name, path=raw, size=acted.size)
        return self._style.done(self.effect, self._shown(raw), acted.size)

    def _read(self, response: InputResponse) -> Answer:
        if isinstance(response, ElicitResult):
            return Answer(response.action, response.content)
        if "duck-typed-answers" not in self._flaws:
            raise paths.Refused("the answer is not an elicitation result")
        # FLAW duck-typed-answers: whatever came back is read as a form answer, and what it
        # lacks counts as yes (a ListRootsResult has neither an action nor content).
        data = response.model_dump(by_alias=True, exclude_none=True)
        content = data.get("content")
        action = str(data.get("action", "accept"))
        return Answer(action, content if isinstance(content, Mapping) else None, empty_means_yes=True)

    def _approves(self, answer: Answer, base_name: str) -> bool:
        if "accept-means-yes" in self._flaws:
            return True  # FLAW accept-means-yes: the content is not read at all
        if self._links is not None and self._links.decides:
            return True  # --link-decides: the person approved on the link; the in-band content is not read
        content = answer.content
        if content is None and answer.empty_means_yes:
            content = forms.affirmative(self._form, base_name)
        return forms.approves(
            self._form,
            content,
            base_name,
            truthy="truthy-strings" in self._flaws,
            **self._form_flaws(),
        )

    def _expected(self, target: paths.Target, approval: states.Approval | None) -> paths.Identity | None:
        """The identity to act on, or None (no-identity-check): the file the user was asked about."""
        expected = target.identity if approval is None else approval.expected(target)
        if "no-identity-check" in self._flaws:
            return None  # FLAW no-identity-check: a replaced file is changed unseen
        if expected != target.identity:
            raise paths.Refused("the file changed while waiting for confirmation")
        return expected

    def _shown(self, name: str) -> str:
        return prompt.shown_name(name, escaping=self._style.escaping)

    def _apply(self, target: paths.Target, expected: paths.Identity | None) -> str:
        shown = self._shown(target.rel)
        size = target.identity.size
        if self.effect == "truncate":
            paths.truncate_beneath(self._policy.root, target.parts, expected)
            event("truncated", tool=self.name, path=target.rel, size=size)
            return self._style.done(self.effect, shown, size)
        if target.is_dir:  # only the deletes-directories flaw lets one this far
            paths.remove_tree(target.real, expected)
        else:
            paths.unlink_beneath(self._policy.root, target.parts, expected)
        event("deleted", tool=self.name, path=target.rel, size=size)
        return self._style.done(self.effect, shown, size)
