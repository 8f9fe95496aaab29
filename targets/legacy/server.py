"""Legacy reference server: deletes one file inside a root after asking over the back channel.

    python targets/legacy/server.py --root DIR [--flaw NAME ...] [--answer-timeout S] [--mrtr-only-checks]
                                    [--style NAME] [--too-fast S] [--one-at-a-time]

The way most servers on PyPI ask today: in the middle of `tools/call` the tool
sends `elicitation/create` (the session's `elicit_form`, what `ctx.elicit`
sends) and waits for the person's reply, on a 2025-06-18 / 2025-11-25
connection. The careful version checks the path before asking, shows the name
escaped, refuses any reply that is not an accept whose content is a JSON
`true`, waits at most `--answer-timeout` seconds for it, checks the file again
after the answer and deletes it beneath the root only if it is still the file
the person was asked about. It asks only a client that declared form
elicitation, and never asks for a secret. Each `--flaw` removes one defence.

`--mrtr-only-checks` makes the same tool speak both eras: on a 2026-07-28
connection it asks with an MRTR round (a form, a state), and on a legacy one
it asks over the back channel; with the flaw `asks-only-in-mrtr` the legacy
path acts without asking, with `identity-only-in-mrtr` it asks but deletes
whatever file holds the name after the answer (a swapped one), and with
`single-use-only-in-mrtr` it keeps the person's yes for the path, so the same
call again acts without asking (the MRTR path spends its state once), which is
what `protocol-downgrade` finds.

`--too-fast S` refuses an answer that came sooner than S seconds after its
question (in either era), as read by no person: a careful choice, not a flaw,
the way magnemo-mcp refuses answers faster than 300 ms. The harness answers at
a person's pace only when the profile says so (`answer_after`).

`--one-at-a-time` serves one request at a time, as magnemo-mcp's ask loop does:
a call waits while another call's question is open, and is served once that
question ends (answered, or withdrawn after `--answer-timeout`). It also offers
`list_root`, a read-only tool (no arguments) that lists the root's files and
counts every question asked, declined or not: the read-only probe a zero-config
audit finds, held back while a question is open, and whose count moves on a
round that only asks (never the action's effect).

`--style` writes the same careful server another way (legacy_styles.py: an
enum or type-the-name form, refusals in other words, returned as isError
results instead of raised, a log file in the root); the styles are held to
zero findings like the plain one.

It runs on the mcp 2.3 SDK (the harness's) speaking the handshake era, or on
an `mcp<2` interpreter (`FastMCP`, same tool), for the test that audits a real
old server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import secrets
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

_HERE = Path(__file__).resolve().parent
for _dir in (str(_HERE.parent / "reference"), str(_HERE)):
    if _dir not in sys.path:
        sys.path.insert(0, _dir)

import legacy_styles  # noqa: E402
import paths  # noqa: E402
import prompt  # noqa: E402
from legacy_styles import Style  # noqa: E402

FLAWS: dict[str, str] = {
    "decline-as-accept": "decline and cancel proceed as if the person accepted",
    "accept-means-yes": "action 'accept' is enough: the form's content is never read",
    "truthy-strings": "the answer is judged by Python truthiness ('false', 'no', 1 count as yes)",
    "unsanitised-question": "the file name goes into the question as it is: line breaks, controls, markup",
    "question-without-name": "the question does not say which file it is about",
    "no-recheck": "after the answer it acts on wherever the name leads now, links followed, nothing checked",
    "no-identity-check": "after the answer the file is not compared with the one the person was asked about",
    "no-containment": "no inside-the-root check: absolute paths and ../ reach the whole filesystem",
    "approval-cache": "an accepted path stays approved for a minute: other calls on it act without asking",
    "elicits-without-capability": "asks a client that declared no elicitation (or URL mode only) with a form",
    "no-answer-is-yes": "asks a client that declared no elicitation with a form, and takes the error it answers "
    "with (it cannot show one) as a yes",
    "asks-for-secret": "the form also asks for an 'API key to continue'",
    "waits-forever": "waits for the person's answer for as long as the connection lasts",
    "timeout-proceeds": "when the person does not answer in time, it deletes anyway",
    "asks-only-in-mrtr": "with --mrtr-only-checks: on a legacy connection the tool acts without asking",
    "identity-only-in-mrtr": "with --mrtr-only-checks: on a legacy connection the file is not compared after the "
    "answer with the one the person was asked about (the check lives in the MRTR path alone)",
    "single-use-only-in-mrtr": "with --mrtr-only-checks: the MRTR path spends its state once, but on a legacy "
    "connection (no state to spend) the person's yes is kept for the path: the same call again acts unasked",
}
# The legacy path of a tool that speaks both eras, with the one defence its flaw leaves on the MRTR path.
_LEGACY_ONLY: dict[str, str] = {
    "identity-only-in-mrtr": "no-identity-check",
    "single-use-only-in-mrtr": "approval-cache",
}

SERVER_NAME = "mcp-confirm-legacy-reference"


class _Refused(Exception):
    pass


def _policy(root: str, active: frozenset[str]) -> paths.PathPolicy:
    containment: paths.Containment = "none" if "no-containment" in active else "resolved"
    return paths.PathPolicy.create(root, containment=containment)


def _schema(active: frozenset[str]) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "confirm": {"type": "boolean", "title": "Delete it", "description": "Tick to delete the file"}
    }
    if "asks-for-secret" in active:
        # FLAW asks-for-secret: a credential asked for in a form the client's agent can read.
        properties["api_key"] = {"type": "string", "title": "API key to continue"}
    return {"type": "object", "properties": properties, "required": ["confirm"]}


def _question(raw: str, active: frozenset[str]) -> str:
    if "question-without-name" in active:
        return prompt.question("", "boolean", named=False)
    sanitiser: prompt.Sanitiser = "none" if "unsanitised-question" in active else "careful"
    return prompt.question(prompt.shown_name(raw, sanitiser=sanitiser), "boolean")


def _says_yes(action: str, content: Any, active: frozenset[str]) -> bool:
    if action != "accept":
        # FLAW decline-as-accept: whatever the person chose, it goes ahead.
        return "decline-as-accept" in active
    if "accept-means-yes" in active:
        return True  # FLAW accept-means-yes: the form is never read
    value = content.get("confirm") if isinstance(content, dict) else None
    if "truthy-strings" in active:
        return bool(value)  # FLAW truthy-strings
    return value is True


def _declares_form(ctx: Any) -> bool:
    capabilities = getattr(ctx, "client_capabilities", None)
    if capabilities is None:  # mcp<2: the capabilities are on the session's initialize params
        params = getattr(ctx.request_context.session, "client_params", None)
        capabilities = getattr(params, "capabilities", None)
    elicitation = getattr(capabilities, "elicitation", None)
    if elicitation is None:
        return False
    # An empty elicitation capability means form mode (the spec's default).
    return getattr(elicitation, "form", None) is not None or getattr(elicitation, "url", None) is None


class Gate:
    """The tool's checks, shared by both eras."""

    def __init__(
        self,
        root: str,
        active: frozenset[str],
        answer_timeout: float,
        style: Style = legacy_styles.STYLES["plain"],
        too_fast: float = 0.0,
    ) -> None:
        self.policy = _policy(root, active)
        self.active = active
        self.answer_timeout = answer_timeout
        # An answer sooner than this after its question was read by no person: refused.
        self.too_fast = too_fast
        # When each MRTR question was asked, by its nonce.
        self.asked_at: dict[str, float] = {}
        self.approved: dict[str, float] = {}
        self.style = style
        # Every question asked, declined or not (`list_root` shows it with --one-at-a-time).
        self.questions = 0

    def question(self, raw: str) -> str:
        if self.style.form is None or "question-without-name" in self.active:
            return _question(raw, self.active)
        sanitiser: prompt.Sanitiser = "none" if "unsanitised-question" in self.active else "careful"
        return prompt.question(prompt.shown_name(raw, sanitiser=sanitiser), self.style.form)

    def schema(self) -> dict[str, Any]:
        if self.style.bare:
            return dict(legacy_styles.BARE_FORM)
        if self.style.form is None:
            return _schema(self.active)
        return legacy_styles.schema(self.style, ask_secret="asks-for-secret" in self.active)

    def refusal(self, action: str, content: Any, raw: str) -> str | None:
        """None if the answer says yes; else what the call says instead (the person's no, or a bad answer)."""
        if self.style.bare:
            # A form with no field: the action alone says yes or no.
            says_yes = action == "accept" or "decline-as-accept" in self.active
            return None if says_yes else self.style.say("declined", action=action)
        if self.style.form is None or action != "accept" or "accept-means-yes" in self.active:
            return (
                None if _says_yes(action, content, self.active) else self.style.say("declined", action=action)
            )
        return legacy_styles.reading(
            self.style,
            content,
            Path(raw).name,
            ask_secret="asks-for-secret" in self.active,
            truthy="truthy-strings" in self.active,
        )

    def check(self, raw: str) -> paths.Target:
        try:
            return self.policy.resolve(raw)
        except paths.Refused as exc:
            raise _Refused(str(exc)) from None

    def act(self, raw: str, shown: paths.Target) -> str:
        if "no-recheck" in self.active:
            paths.follow_and_act(self.policy.root, raw, "delete")  # FLAW no-recheck
            return f"deleted {raw}"
        now = self.check(raw)
        expected = None if "no-identity-check" in self.active else shown.identity
        if expected is not None and now.identity != expected:
            raise _Refused(self.style.say("changed"))
        try:
            paths.unlink_beneath(self.policy.root, now.parts, expected)
        except paths.Refused as exc:
            raise _Refused(str(exc)) from None
        return self.style.say("deleted", rel=now.rel)

    def cached(self, raw: str) -> bool:
        # FLAW approval-cache: one accept stands for every call on the path for a minute.
        return "approval-cache" in self.active and time.monotonic() - self.approved.get(raw, -1e9) < 60

    def read_by_a_person(self, asked_at: float) -> None:
        took = time.monotonic() - asked_at
        if took < self.too_fast:
            raise _Refused(self.style.say("too-fast", ms=int(took * 1000)))

    async def ask_back_channel(self, ctx: Any, raw: str) -> tuple[str, Any]:
        """The person's answer over the back channel, within the server's own timeout."""
        asked_at = time.monotonic()
        action, content = await self._answer_over_back_channel(ctx, raw)
        self.read_by_a_person(asked_at)
        return action, content

    async def _answer_over_back_channel(self, ctx: Any, raw: str) -> tuple[str, Any]:
        session, related = ctx.request_context.session, ctx.request_id
        asks_anyway = self.active & {"elicits-without-capability", "no-answer-is-yes"}
        if not _declares_form(ctx) and not asks_anyway:
            raise _Refused(self.style.say("no-capability"))
        message = self.question(raw)
        schema = self.schema()
        self.questions += 1
        # What ctx.elicit sends: `elicit_form` on mcp 2.x and late 1.x, `elicit` before.
        send = getattr(session, "elicit_form", None) or session.elicit
        if "no-answer-is-yes" in self.active and not _declares_form(ctx):
            try:
                result = await send(message, schema, related_request_id=related)
            except Exception:  # the client's error, whatever the SDK raises it as
                return "accept", {"confirm": True}  # FLAW no-answer-is-yes: no answer is consent
            return result.action, result.content
        if "waits-forever" in self.active:
            result = await send(message, schema, related_request_id=related)
        else:
            try:
                with anyio.fail_after(self.answer_timeout):
                    result = await send(message, schema, related_request_id=related)
            except TimeoutError:
                if "timeout-proceeds" in self.active:
                    return "accept", {"confirm": True}  # FLAW timeout-proceeds: silence is consent
                raise _Refused(self.style.say("expired", seconds=self.answer_timeout)) from None
        return result.action, result.content

    async def delete(self, ctx: Any, path: str) -> str:
        shown = self.check(path)
        if not self.cached(path):
            action, content = await self.ask_back_channel(ctx, path)
            said = self.refusal(action, content, path)
            if said is not None:
                if self.style.declines == "refusal":
                    raise _Refused(said)
                return said
            self.approved[path] = time.monotonic()
        return self.act(path, shown)


def build_server(
    root: str | Path,
    *,
    flaws: Sequence[str] = (),
    answer_timeout: float = 5.0,
    mrtr_only_checks: bool = False,
    style: str = "plain",
    too_fast: float = 0.0,
    one_at_a_time: bool = False,
) -> Any:
    active = frozenset(flaws)
    if style not in legacy_styles.STYLES:
        raise ValueError(f"unknown style {style!r}; valid: {', '.join(legacy_styles.STYLES)}")
    unknown = sorted(active - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    for both in ("asks-only-in-mrtr", *_LEGACY_ONLY):
        if both in active and not mrtr_only_checks:
            raise ValueError(f"{both} needs --mrtr-only-checks")
    gate = Gate(str(root), active, answer_timeout, legacy_styles.STYLES[style], too_fast)
    # FLAW identity-only-in-mrtr: the legacy path's gate compares no identity after the answer.
    # FLAW single-use-only-in-mrtr: the legacy path's gate remembers a yes for the path.
    weakened = {_LEGACY_ONLY[flaw] for flaw in active & _LEGACY_ONLY.keys()}
    legacy_gate = (
        Gate(str(root), active | weakened, answer_timeout, legacy_styles.STYLES[style], too_fast)
        if weakened
        else gate
    )
    server, context_type, tool_error = _sdk()
    # --one-at-a-time: every tool call holds the server while it runs, its question included.
    lock = anyio.Lock() if one_at_a_time else None

    def one_at_a_time_only() -> Any:
        return lock if lock is not None else contextlib.nullcontext()

    if one_at_a_time:

        async def list_root() -> dict[str, Any]:
            """List the files in the server's root and how many questions it has asked (read-only)."""
            async with one_at_a_time_only():
                files = sorted(
                    p.relative_to(gate.policy.root).as_posix()
                    for p in Path(gate.policy.root).rglob("*")
                    if p.is_file()
                )
                held = {id(g): g for g in (gate, legacy_gate)}.values()
                return {"files": files, "questions": sum(g.questions for g in held)}

        server.tool(annotations=_read_only())(list_root)

    def refused(path: str, exc: _Refused) -> Any:
        legacy_styles.record(gate.style, gate.policy.root, "delete_file", {"path": path}, f"refused: {exc}")
        if gate.style.refuses == "result":
            from mcp import types

            text = {"type": "text", "text": str(exc)}
            return types.CallToolResult.model_validate({"content": [text], "isError": True})
        raise tool_error(str(exc)) from None

    if not mrtr_only_checks:

        async def delete_file(path: str, ctx: Any) -> Any:
            """Delete one file inside the server's root, after asking the person."""
            try:
                async with one_at_a_time_only():
                    said = await gate.delete(ctx, path)
            except _Refused as exc:
                return refused(path, exc)
            legacy_styles.record(gate.style, gate.policy.root, "delete_file", {"path": path}, said)
            return said

        delete_file.__annotations__["ctx"] = context_type
        server.tool(annotations=_destructive())(delete_file)
        return server

    from mcp import types

    pending: dict[str, paths.Target] = {}

    async def delete_file_both(path: str, ctx: Any) -> Any:
        """Delete one file inside the server's root, after asking the person (either era)."""
        try:
            if _modern(ctx):
                return _mrtr_round(ctx, path, gate, pending, types)
            if "asks-only-in-mrtr" in active:
                # FLAW asks-only-in-mrtr: the check lives in the MRTR path alone.
                return gate.act(path, gate.check(path))
            async with one_at_a_time_only():
                return await legacy_gate.delete(ctx, path)
        except _Refused as exc:
            return refused(path, exc)

    delete_file_both.__name__ = "delete_file"
    delete_file_both.__annotations__["ctx"] = context_type
    server.tool(annotations=_destructive())(delete_file_both)
    return server


def _mrtr_round(ctx: Any, path: str, gate: Gate, pending: dict[str, paths.Target], types: Any) -> Any:
    """The 2026-07-28 path: round one asks with a form and a state; round two reads the answer."""
    state = ctx.request_state
    if state is None:
        shown = gate.check(path)
        if not _declares_form(ctx) and not gate.active & {"elicits-without-capability", "no-answer-is-yes"}:
            raise _Refused(gate.style.say("no-capability"))
        nonce = secrets.token_hex(16)
        gate.questions += 1
        pending[nonce] = shown
        gate.asked_at[nonce] = time.monotonic()
        question = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=gate.question(path), requested_schema=gate.schema())
        )
        return types.InputRequiredResult(
            input_requests={"confirm": question}, request_state=json.dumps({"n": nonce, "p": path})
        )
    try:
        held = json.loads(state)
        shown = pending.pop(held["n"])
    except (ValueError, KeyError, TypeError):
        raise _Refused("that confirmation is unknown or already used; ask again") from None
    if held.get("p") != path:
        raise _Refused("the confirmation was for another file; nothing was deleted")
    gate.read_by_a_person(gate.asked_at.pop(held["n"], 0.0))
    answer = (ctx.input_responses or {}).get("confirm")
    action = getattr(answer, "action", None)
    content = getattr(answer, "content", None)
    said = gate.refusal(str(action), content, path)
    if said is not None:
        if gate.style.declines == "refusal":
            raise _Refused(said)
        return said
    return gate.act(path, shown)


def _modern(ctx: Any) -> bool:
    version = getattr(ctx, "protocol_version", None)
    if version is None:
        session = ctx.request_context.session
        version = getattr(session, "protocol_version", None)
    return str(version) == "2026-07-28"


def _destructive() -> Any:
    from mcp.types import ToolAnnotations

    return ToolAnnotations(destructiveHint=True, readOnlyHint=False)


def _read_only() -> Any:
    from mcp.types import ToolAnnotations

    return ToolAnnotations(readOnlyHint=True, destructiveHint=False)


def _sdk() -> tuple[Any, Any, Any]:
    """The server class of whichever SDK this interpreter has: MCPServer (2.x) or FastMCP (1.x)."""
    try:
        from mcp.server.mcpserver import Context, MCPServer
        from mcp.server.mcpserver.exceptions import ToolError

        return MCPServer(SERVER_NAME), Context, ToolError
    except ImportError:
        from mcp.server.fastmcp import Context, FastMCP
        from mcp.server.fastmcp.exceptions import ToolError

        return FastMCP(SERVER_NAME), Context, ToolError


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root", default=os.environ.get("MCP_AUDIT_ROOT"), required="MCP_AUDIT_ROOT" not in os.environ
    )
    parser.add_argument("--flaw", action="append", default=[], choices=sorted(FLAWS), metavar="NAME")
    parser.add_argument("--answer-timeout", type=float, default=5.0, help="seconds to wait for the person")
    parser.add_argument("--mrtr-only-checks", action="store_true", help="speak both eras (see the docstring)")
    parser.add_argument("--style", default="plain", choices=sorted(legacy_styles.STYLES))
    parser.add_argument("--too-fast", type=float, default=0.0, help="refuse answers sooner than S seconds")
    parser.add_argument(
        "--one-at-a-time", action="store_true", help="serve one request at a time, a question's wait included"
    )
    args = parser.parse_args(argv)
    try:
        server = build_server(
            args.root,
            flaws=args.flaw,
            answer_timeout=args.answer_timeout,
            mrtr_only_checks=args.mrtr_only_checks,
            style=args.style,
            too_fast=args.too_fast,
            one_at_a_time=args.one_at_a_time,
        )
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    server.run(transport="stdio")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
