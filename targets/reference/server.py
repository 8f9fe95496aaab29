"""Reference MCP server: deletes one file inside a root, after a human confirms.

    python targets/reference/server.py --root DIR [--flaw NAME ...] [options]

The careful configuration is the yardstick the harness must find nothing wrong with;
each `--flaw` removes exactly one defence so every attack can be proved both ways.
The confirmation is hand-rolled MRTR: round 1 returns an `InputRequiredResult` with a
form and a plaintext state (sealed on the wire by the SDK's `RequestStateBoundary`);
round 2 reads the answer and the unsealed state, spends the state's nonce, re-checks
the file and deletes it beneath a directory descriptor.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import inspect
import json
import logging
import os
import secrets
import sys
from collections.abc import AsyncIterator, Collection, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, get_args

# Run as a script, this directory is already on sys.path; imported by file path (tests,
# the harness), it is not. Either way the siblings are then importable by plain name.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import flaws as flaw_switches  # noqa: E402
import forms  # noqa: E402
import ledger as ledgers  # noqa: E402
import paths  # noqa: E402
import prompt  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity  # noqa: E402
from mcp.types import (  # noqa: E402
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    InputResponse,
    ToolAnnotations,
)
from pydantic import Field  # noqa: E402

__all__ = ["SERVER_NAME", "build_server", "main"]

SERVER_NAME = "mcp-confirm-reference"  # also the audience claim replicas must share
CONFIRM_KEY = "confirm"

log = logging.getLogger("mcp_confirm_reference")


def _event(kind: str, **fields: object) -> None:
    """One line per security event on stderr (stdout is the protocol); %r keeps it one line."""
    log.info("%s %s", kind, " ".join(f"{key}={value!r}" for key, value in fields.items()))


@dataclass(frozen=True, slots=True)
class Recorded:
    """What round 1 recorded in the request state."""

    nonce: str
    path: str  # careful: relative to the root; plain-state: absolute real path
    identity: paths.Identity | None  # None in plain-state, which carries no identity


class DeleteTool:
    def __init__(
        self,
        policy: paths.PathPolicy,
        ledger: ledgers.Ledger,
        form: forms.FormKind,
        flaws: frozenset[str],
    ) -> None:
        self._policy = policy
        self._ledger = ledger
        self._form = form
        self._flaws = flaws

    async def __call__(self, raw: object, ctx: Context) -> str | InputRequiredResult:
        try:
            return await self._round(raw, ctx)
        except (paths.Refused, forms.BadAnswer) as exc:
            _event("refused", path=raw, reason=str(exc))
            raise ToolError(str(exc)) from None

    async def _round(self, raw: object, ctx: Context) -> str | InputRequiredResult:
        answer = (ctx.input_responses or {}).get(CONFIRM_KEY)
        if answer is None:
            return await self._ask(raw)
        if ctx.request_state is None:  # the SDK also maps `requestState: null` to None
            if "stateless-answers" in self._flaws:
                return await self._act(raw, answer, None)  # FLAW stateless-answers
            _event("answer-without-state-ignored", path=raw)
            return await self._ask(raw)
        recorded = self._read_state(ctx.request_state)
        if not await self._ledger.spend(recorded.nonce):
            raise paths.Refused("confirmation already used or unknown")
        return await self._act(raw, answer, recorded)

    async def _ask(self, raw: object) -> InputRequiredResult:
        # FLAW ask-before-check: containment is left to round 2, after the user was asked.
        target = self._policy.resolve(raw, check_containment="ask-before-check" not in self._flaws)
        nonce = secrets.token_urlsafe(16)
        await self._ledger.issue(nonce)
        shown = prompt.shown_name(
            target.rel,
            keep_invisible="sanitiser-keeps-bidi" in self._flaws,
            truncate="end" if "sanitiser-truncates-end" in self._flaws else "middle",
        )
        request = ElicitRequest(
            params=ElicitRequestFormParams(
                mode="form",
                message=prompt.question(shown, self._form),
                requested_schema=forms.schema(self._form, ask_secret="asks-for-secret" in self._flaws),
            )
        )
        _event("asked", path=target.rel)
        state = self._write_state(nonce, target)
        return InputRequiredResult(input_requests={CONFIRM_KEY: request}, request_state=state)

    async def _act(self, raw: object, answer: InputResponse, recorded: Recorded | None) -> str:
        if not isinstance(answer, ElicitResult):
            raise paths.Refused("the answer is not an elicitation result")
        if answer.action != "accept" and "decline-as-accept" not in self._flaws:
            _event("not-confirmed", path=raw, action=answer.action)
            return f"Nothing was deleted: the user chose {answer.action}."
        target = self._policy.resolve(raw)  # every round-1 check again, on today's filesystem
        if answer.action == "accept":  # FLAW decline-as-accept: any other action skips the form
            approved = forms.approves(
                self._form,
                answer.content,
                PurePosixPath(target.rel).name,
                ask_secret="asks-for-secret" in self._flaws,
                truthy="truthy-strings" in self._flaws,
            )
            if not approved:
                _event("not-confirmed", path=target.rel, action="accept")
                return "Nothing was deleted: the user chose to keep the file."
        expected: paths.Identity | None = target.identity
        if recorded is not None:
            if recorded.path != self._state_path(target):
                raise paths.Refused("the confirmation was for a different file")
            if recorded.identity is not None:
                expected = recorded.identity
        if "no-identity-check" in self._flaws:
            expected = None  # FLAW no-identity-check: a replaced file is deleted unseen
        elif expected != target.identity:
            raise paths.Refused("the file changed while waiting for confirmation")
        paths.unlink_beneath(self._policy.root, target.parts, expected)
        _event("deleted", path=target.rel, size=target.identity.size)
        return f'Deleted "{prompt.shown_name(target.rel)}" ({target.identity.size} bytes).'

    def _state_path(self, target: paths.Target) -> str:
        return str(target.real) if "plain-state" in self._flaws else target.rel

    def _write_state(self, nonce: str, target: paths.Target) -> str:
        if "plain-state" in self._flaws:
            # FLAW plain-state: readable and, with the boundary gone, editable by the client.
            return json.dumps({"path": str(target.real), "nonce": nonce})
        ident = target.identity
        return json.dumps(
            {
                "nonce": nonce,
                "path": target.rel,
                "identity": {
                    "dev": ident.dev,
                    "ino": ident.ino,
                    "size": ident.size,
                    "mtime_ns": ident.mtime_ns,
                },
            }
        )

    def _read_state(self, state: str) -> Recorded:
        try:
            data = json.loads(state)
            nonce, path = data["nonce"], data["path"]
            ident = data.get("identity")
            identity = (
                None
                if ident is None
                else paths.Identity(**{k: int(ident[k]) for k in paths.Identity.__slots__})
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            raise paths.Refused("malformed confirmation state") from None
        if not isinstance(nonce, str) or not isinstance(path, str):
            raise paths.Refused("malformed confirmation state")
        if identity is None and "plain-state" not in self._flaws:
            raise paths.Refused("malformed confirmation state")
        return Recorded(nonce, path, identity)


def build_server(
    root: str | Path,
    *,
    flaws: Collection[str] = (),
    tool_name: str = "delete_file",
    path_arg: str = "path",
    paths_mode: paths.PathMode = "both",
    form: forms.FormKind = "boolean",
    ttl_seconds: float = 300.0,
    shared_key: bytes | None = None,
    ledger: str = "memory",
) -> MCPServer:
    """The server, ready for `mcp.Client(server)` in-process or `.run()`."""
    active = flaw_switches.check(flaws)
    if not path_arg.isidentifier() or path_arg == "ctx":
        raise ValueError(f"--path-arg must be a Python identifier other than 'ctx', got {path_arg!r}")
    if paths_mode not in get_args(paths.PathMode) or form not in forms.FORMS:
        raise ValueError(f"bad paths mode {paths_mode!r} or form {form!r}")
    _configure_log()
    link_check: paths.LinkCheck = "every-component"
    if "link-after-resolve" in active:
        link_check = "after-resolve"
    elif "link-last-component-only" in active:
        link_check = "last-component"
    policy = paths.PathPolicy.create(
        root, mode=paths_mode, prefix_containment="prefix-containment" in active, link_check=link_check
    )
    backend: ledgers.Backend
    if "per-process-ledger" in active:
        backend = ledgers.ProcessLocalBackend(ttl_seconds)  # FLAW per-process-ledger
    else:
        backend = ledgers.open_backend(ledger)
    nonces = ledgers.Ledger(
        backend, ttl_seconds, never_spend="no-ledger" in active, racy="check-then-delete-ledger" in active
    )
    security = (
        RequestStateSecurity.ephemeral(ttl=ttl_seconds)
        if shared_key is None
        else RequestStateSecurity(keys=[shared_key], ttl=ttl_seconds)
    )

    @asynccontextmanager
    async def lifespan(_: MCPServer[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await backend.aclose()  # an unclosed redis connection outlives its event loop

    server = MCPServer(SERVER_NAME, request_state_security=security, lifespan=lifespan)
    if "plain-state" in active:
        _remove_boundary(server)

    tool = DeleteTool(policy, nonces, form, active)

    async def delete(ctx: Context, **arguments: str) -> str | InputRequiredResult:
        return await tool(arguments[path_arg], ctx)

    delete.__name__ = delete.__qualname__ = tool_name
    # The argument's name is configurable, so the signature the SDK reads is built here.
    described = Annotated[str, Field(description="Path of the file to delete, inside the server's root.")]
    delete.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(path_arg, inspect.Parameter.KEYWORD_ONLY, annotation=described),
            inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context),
        ]
    )
    delete.__annotations__ = {path_arg: described, "ctx": Context}
    server.add_tool(
        delete,
        name=tool_name,
        description="Delete one file inside the server's root. Asks the user to confirm first.",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
        ),
    )

    # A harmless neighbour: states are presented on it, and discovery must skip it.
    stat_policy = paths.PathPolicy.create(root, mode=paths_mode)

    @server.tool(
        name="stat_file",
        description="Size in bytes of one file inside the server's root.",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )
    def stat_file(path: str) -> int:
        try:
            return stat_policy.resolve(path).identity.size
        except paths.Refused as exc:
            raise ToolError(str(exc)) from None

    return server


def _remove_boundary(server: MCPServer) -> None:
    """FLAW plain-state: take the SDK's sealing middleware out of the chain."""
    before = len(server.middleware)
    server.middleware[:] = [m for m in server.middleware if not isinstance(m, RequestStateBoundary)]
    if len(server.middleware) != before - 1:
        raise RuntimeError("expected exactly one RequestStateBoundary in the middleware chain")


def _configure_log() -> None:
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("mcp-confirm-reference: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False


def decode_key(text: str) -> bytes:
    """A 32-byte key given as hex or base64 (standard or URL-safe, padding optional)."""
    text = text.strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        try:
            padded = text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4)
            key = base64.b64decode(padded, validate=True)
        except (binascii.Error, ValueError):
            key = b""
    if len(key) != 32:
        raise ValueError("the shared key must be 32 bytes, as 64 hex digits or base64")
    return key


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = parser.add_argument
    add("--root", required=True, metavar="DIR", help="the only directory files may be deleted from")
    add("--tool-name", default="delete_file", metavar="NAME", help="name of the destructive tool")
    add("--path-arg", default="path", metavar="NAME", help="name of the tool's path argument")
    add("--paths", default="both", choices=get_args(paths.PathMode), help="how the path argument is read")
    add("--form", default="boolean", choices=forms.FORMS, help="what the confirmation form asks for")
    add("--ttl-seconds", type=float, default=300.0, metavar="N", help="lifetime of a confirmation")
    add("--shared-key-env", metavar="NAME", help="env var holding a 32-byte state key shared by replicas")
    add("--ledger", default="memory", metavar="SPEC", help="memory | sqlite:PATH | redis://HOST:PORT/DB")
    add(
        "--transport",
        default="stdio",
        choices=("stdio", "http"),
        help="http serves http://127.0.0.1:PORT/mcp",
    )
    add("--port", type=int, default=8000, help="HTTP port (binds 127.0.0.1 only)")
    names = sorted(flaw_switches.FLAWS)
    add(
        "--flaw",
        action="append",
        default=[],
        choices=names,
        metavar="NAME",
        help=f"remove one defence: {names}",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    key = None
    if args.shared_key_env:
        value = os.environ.get(args.shared_key_env)
        if not value:
            parser.error(f"environment variable {args.shared_key_env} is empty or not set")
        try:
            key = decode_key(value)
        except ValueError as exc:
            parser.error(str(exc))
    try:
        server = build_server(
            args.root,
            flaws=args.flaw,
            tool_name=args.tool_name,
            path_arg=args.path_arg,
            paths_mode=args.paths,
            form=args.form,
            ttl_seconds=args.ttl_seconds,
            shared_key=key,
            ledger=args.ledger,
        )
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    if args.transport == "http":
        _serve_http(server, args.port)
    else:
        server.run(transport="stdio")


def _serve_http(server: MCPServer, port: int) -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp, loopback only.

    Served with uvicorn directly rather than `server.run("streamable-http")` only to
    turn the access log off: uvicorn writes it to stdout, which should stay quiet.
    """
    import uvicorn

    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.run(app, host="127.0.0.1", port=port, access_log=False, log_level="info")


if __name__ == "__main__":
    main()
