"""A legacy-era server whose one approved action leaves several marks: a wake that sends three packets.

    python targets/legacy/wake.py --root DIR [--flaw NAME] [--both-eras] [--style plain|signed]

`wake(host)` asks the person over the back channel (`elicitation/create`, what
`ctx.elicit` sends; the host shown escaped, an unanswered question a no after
`answer_timeout` seconds) and, on an accept whose `confirm` is a JSON `true`, appends
three lines to `packets.jsonl` in the root: one magic packet is sent three
times, as real Wake-on-LAN tools do. So one effect is three rows, and a count of
effects that does not learn that unit would read seven honest approvals as
twenty-one. With `--flaw approval-cache` one accept stands for every later call
on the same host for a minute: a call that acted on another call's approval.

`--both-eras` makes the same tool speak 2026-07-28 too: there it asks with an MRTR
round (a form and a state) and spends the state once; on a legacy connection it
asks over the back channel on every call. Two flaws leave single use on one path
alone, which `protocol-downgrade` (`answer: replayed`) finds for an action that
names no file: `single-use-only-in-mrtr` keeps a legacy yes for the host (the
same call again wakes it unasked), `single-use-only-in-legacy` never spends the
MRTR state (the same state and yes wake it again). `--style signed` writes the
careful tool another way: the state is an HMAC-signed record whose nonce is
spent in a set, and refusals are returned as isError results in other words.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import importlib.util
import json
import os
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import anyio

# The legacy reference server's SDK helpers, loaded by path: "server" is the name of several
# reference servers, and an in-process audit may have imported another one under it.
_SPEC = importlib.util.spec_from_file_location(
    "mca_legacy_reference_server", Path(__file__).resolve().with_name("server.py")
)
assert _SPEC is not None
assert _SPEC.loader is not None
_legacy = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_legacy)
_declares_form, _destructive, _sdk = _legacy._declares_form, _legacy._destructive, _legacy._sdk
_modern = _legacy._modern
# The legacy server's question module (targets/reference/prompt.py), already on its path.
_prompt = _legacy.prompt

FLAWS = {
    "approval-cache": "one accept stands for every call on the same host for a minute",
    "single-use-only-in-mrtr": "with --both-eras: the MRTR path spends its state once, but on a legacy connection "
    "a yes is kept for the host: the same call again wakes it unasked",
    "single-use-only-in-legacy": "with --both-eras: the legacy path asks on every call, but the MRTR path never "
    "spends its state: the same state and yes wake the host again",
}
_BOTH_ERAS_ONLY = ("single-use-only-in-mrtr", "single-use-only-in-legacy")
STYLES = ("plain", "signed")
PACKETS_PER_WAKE = 3
SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


class _Refused(Exception):
    pass


def _question(host: str) -> str:
    # The host is the agent's text: shown escaped and bounded, as the file servers show a name.
    return f'Wake the machine "{_prompt.shown_name(host)}" on the local network? Tick the box to wake it.'


def build_server(
    root: str | Path,
    *,
    flaws: Sequence[str] = (),
    both_eras: bool = False,
    style: str = "plain",
    answer_timeout: float = 5.0,
) -> Any:
    active = frozenset(flaws)
    unknown = sorted(active - FLAWS.keys())
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; valid: {', '.join(STYLES)}")
    for flaw in active.intersection(_BOTH_ERAS_ONLY):
        if not both_eras:
            raise ValueError(f"{flaw} needs --both-eras")
    log = Path(root) / "packets.jsonl"
    # The log is there from the start, as a sender's is: a wake adds rows to it.
    log.touch()
    approved: dict[str, float] = {}
    # FLAW single-use-only-in-mrtr: the legacy path keeps a yes for the host, as approval-cache does.
    caches = bool(active & {"approval-cache", "single-use-only-in-mrtr"})
    states = _PlainStates(active) if style == "plain" else _SignedStates(active)
    server, context_type, tool_error = _sdk()

    def send_packets(host: str) -> str:
        with log.open("a", encoding="utf-8") as out:
            for copy in range(PACKETS_PER_WAKE):
                out.write(json.dumps({"host": host, "copy": copy, "at": time.time()}) + "\n")
        return f"sent {PACKETS_PER_WAKE} magic packets to {host}"

    async def over_back_channel(host: str, ctx: Any) -> str:
        cached = caches and time.monotonic() - approved.get(host, -1e9) < 60
        if not cached:
            if not _declares_form(ctx):
                raise _Refused(states.say("no-form"))
            session = ctx.request_context.session
            send = getattr(session, "elicit_form", None) or session.elicit
            # A question nobody answers is a no after a bound of its own, not a tool call held open forever.
            try:
                with anyio.fail_after(answer_timeout):
                    answer = await send(_question(host), SCHEMA, related_request_id=ctx.request_id)
            except TimeoutError:
                raise _Refused(states.say("unanswered")) from None
            content = answer.content if isinstance(answer.content, dict) else {}
            if answer.action != "accept" or content.get("confirm") is not True:
                raise _Refused(states.say("declined"))
            approved[host] = time.monotonic()
        return send_packets(host)

    def over_mrtr(host: str, ctx: Any) -> Any:
        from mcp import types

        if ctx.request_state is None:
            if not _declares_form(ctx):
                raise _Refused(states.say("no-form"))
            question = types.ElicitRequest(
                params=types.ElicitRequestFormParams(message=_question(host), requested_schema=SCHEMA)
            )
            return types.InputRequiredResult(
                input_requests={"confirm": question}, request_state=states.mint(host)
            )
        states.spend(ctx.request_state, host)
        answer = (ctx.input_responses or {}).get("confirm")
        content = getattr(answer, "content", None)
        if getattr(answer, "action", None) != "accept" or not isinstance(content, dict):
            raise _Refused(states.say("declined"))
        if content.get("confirm") is not True:
            raise _Refused(states.say("declined"))
        return send_packets(host)

    async def wake(host: str, ctx: Any) -> Any:
        """Wake a machine on the local network, after asking the person."""
        try:
            if both_eras and _modern(ctx):
                return over_mrtr(host, ctx)
            return await over_back_channel(host, ctx)
        except _Refused as exc:
            if style == "plain":
                raise tool_error(str(exc)) from None
            from mcp import types

            text = {"type": "text", "text": str(exc)}
            return types.CallToolResult.model_validate({"content": [text], "isError": True})

    wake.__annotations__["ctx"] = context_type
    server.tool(annotations=_destructive())(wake)
    return server


class _PlainStates:
    """The plain style: a nonce per question, held in a dict and popped by its answer."""

    _SAID: ClassVar[dict[str, str]] = {
        "no-form": "this client cannot show a question; nothing was sent",
        "declined": "not woken: the person did not approve",
        "unanswered": "not woken: nobody answered in time",
        "spent": "that confirmation is unknown or already used; ask again",
        "other": "the confirmation was for another host; nothing was sent",
    }

    def __init__(self, active: frozenset[str]) -> None:
        self._pending: dict[str, str] = {}
        self._keeps = "single-use-only-in-legacy" in active

    def say(self, what: str) -> str:
        return self._SAID[what]

    def mint(self, host: str) -> str:
        nonce = secrets.token_hex(16)
        self._pending[nonce] = host
        return nonce

    def spend(self, state: str, host: str) -> None:
        # FLAW single-use-only-in-legacy: the state is read, never spent.
        held = self._pending.get(state) if self._keeps else self._pending.pop(state, None)
        if held is None:
            raise _Refused(self.say("spent"))
        if held != host:
            raise _Refused(self.say("other"))


class _SignedStates:
    """The signed style: the state carries its host and nonce under an HMAC; spent nonces are a set."""

    _SAID: ClassVar[dict[str, str]] = {
        "no-form": "Refused: no form elicitation declared by this client.",
        "declined": "Refused: wake not approved.",
        "unanswered": "Refused: approval timed out.",
        "spent": "Refused: approval invalid or replayed.",
        "other": "Refused: approval does not match this host.",
    }

    def __init__(self, active: frozenset[str]) -> None:
        self._key = secrets.token_bytes(32)
        self._spent: set[str] = set()
        self._keeps = "single-use-only-in-legacy" in active

    def say(self, what: str) -> str:
        return self._SAID[what]

    def _mac(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()

    def mint(self, host: str) -> str:
        body = json.dumps({"host": host, "nonce": secrets.token_hex(16)}, sort_keys=True)
        return f"{body}|{self._mac(body)}"

    def spend(self, state: str, host: str) -> None:
        body, _, mac = state.rpartition("|")
        if not hmac.compare_digest(mac, self._mac(body)):
            raise _Refused(self.say("spent"))
        held = json.loads(body)
        if held["nonce"] in self._spent:
            raise _Refused(self.say("spent"))
        if held["host"] != host:
            raise _Refused(self.say("other"))
        if not self._keeps:  # FLAW single-use-only-in-legacy: the nonce is never marked spent.
            self._spent.add(held["nonce"])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--root", default=os.environ.get("MCP_AUDIT_ROOT"), required="MCP_AUDIT_ROOT" not in os.environ
    )
    parser.add_argument("--flaw", action="append", default=[], choices=sorted(FLAWS), metavar="NAME")
    parser.add_argument("--both-eras", action="store_true", help="speak 2026-07-28 too (see the docstring)")
    parser.add_argument("--style", default="plain", choices=STYLES)
    args = parser.parse_args(argv)
    try:
        server = build_server(args.root, flaws=args.flaw, both_eras=args.both_eras, style=args.style)
    except ValueError as exc:
        parser.error(str(exc))
    server.run()


if __name__ == "__main__":
    main()
