"""Reference MCP server: deletes one file inside a root, after a human confirms.

    python targets/reference/server.py --root DIR [--flaw NAME ...] [options]

The careful configuration is the yardstick the harness must find nothing wrong with;
each `--flaw` removes exactly one defence so every attack can be proved both ways.
The confirmation is hand-rolled MRTR (see confirm.py): round 1 returns an
`InputRequiredResult` with a form and a plaintext state (sealed on the wire by the SDK's
`RequestStateBoundary`, or HMAC-signed with `--state signed`, or both with `--state
signed-and-sealed`, as mcp-confirm 0.1.0 did); round 2 reads the answer
and the state, spends the state's nonce, re-checks the file and deletes it beneath a
directory descriptor. `--second-tool` adds `truncate_file`, confirmed the same way.
`--transport http --auth bearer --tokens-env NAME` wants a bearer token (identity.py).
`--approve-link WEBHOOK` has the person approve each question by a link posted to a
webhook, and acts on the retry only once it was followed (approve_link.py).
`--style` writes the same careful server in another hand (see styles/): how the name
is escaped and quoted, the refusal texts, and for `own-ledger` its own single-use tickets.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import inspect
import logging
import os
import secrets
import sys
import time
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

# Run as a script, this directory is already on sys.path; imported by file path (tests,
# the harness), it is not. Either way the siblings are then importable by plain name.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import approve_link  # noqa: E402
import confirm  # noqa: E402
import flaws as flaw_switches  # noqa: E402
import forms  # noqa: E402
import identity  # noqa: E402
import ledger as ledgers  # noqa: E402
import paths  # noqa: E402
import race_gate  # noqa: E402
import serving  # noqa: E402
import states  # noqa: E402
import styles  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import (  # noqa: E402
    RequestStateSecurity,
    authenticated_principal,
)
from mcp.types import InputRequiredResult, ToolAnnotations  # noqa: E402
from pydantic import Field  # noqa: E402

__all__ = ["SERVER_NAME", "StateMode", "build_server", "main"]

SERVER_NAME = "mcp-confirm-reference"  # also the audience claim replicas must share
SECOND_TOOL = "truncate_file"
StateMode = Literal["sealed", "signed", "signed-and-sealed"]
# What the SDK's seal lives for unless told otherwise (RequestStateSecurity's default).
SDK_DEFAULT_TTL = 600.0

log = logging.getLogger("mcp_confirm_reference")


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
    second_tool: bool = False,
    state: StateMode = "sealed",
    tokens: Mapping[str, str] | None = None,
    style: str = "quoted",
    late_first_question: float = 0.0,
    approve_link_to: str | None = None,
    link_decides: bool = False,
) -> MCPServer:
    """The server, ready for `mcp.Client(server)` in-process or `.run()`; `approve_link_to`: a webhook
    the person's approve link is posted to (approve_link.py); `link_decides`: the link alone approves,
    the in-band answer's form is not read (a careful style of its own)."""
    active = flaw_switches.check(flaws, state=state)
    if "link-unchecked" in active and approve_link_to is None:
        raise ValueError("link-unchecked weakens --approve-link: give the webhook too")
    if link_decides and approve_link_to is None:
        raise ValueError("--link-decides is a style of --approve-link: give the webhook too")
    links = None
    if approve_link_to is not None:
        links = approve_link.Links(
            approve_link_to, unchecked="link-unchecked" in active, decides=link_decides
        ).start()
    _check_options(tool_name, path_arg, paths_mode, form, state, second_tool)
    written = _style(style, active, state, ledger, shared_key is not None)
    serving.configure_log(log, "mcp-confirm-reference")
    if "no-expiry" in active:
        ttl_seconds = SDK_DEFAULT_TTL  # FLAW no-expiry: the lifetime option reaches nothing
    policy = _policy(root, paths_mode, active)
    backend: ledgers.Backend
    if "per-process-ledger" in active:
        backend = ledgers.ProcessLocalBackend(ttl_seconds)  # FLAW per-process-ledger
    else:
        backend = ledgers.open_backend(ledger)
    nonces = ledgers.Ledger(
        backend,
        ttl_seconds,
        never_spend="no-ledger" in active,
        racy="check-then-delete-ledger" in active,
        late_first_question=late_first_question,
    )
    # FLAW trusts-identity-header: the principal a state is bound to is whatever the client claims.
    binding = identity.claimed_identity if "trusts-identity-header" in active else authenticated_principal
    key = shared_key if shared_key is not None else secrets.token_bytes(32)
    security = RequestStateSecurity(keys=[key], ttl=ttl_seconds, bind_principal=binding)

    @asynccontextmanager
    async def lifespan(_: MCPServer[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await backend.aclose()  # an unclosed redis connection outlives its event loop

    # With tokens, the SDK's bearer middleware refuses requests without one (HTTP 401) and
    # the boundary binds every state to the principal the token proves.
    auth: dict[str, Any] = (
        {"auth": identity.auth_settings(), "token_verifier": identity.StaticTokens(tokens)} if tokens else {}
    )
    server = MCPServer(SERVER_NAME, request_state_security=security, lifespan=lifespan, **auth)
    if state == "signed" or active & flaw_switches.STATE_FLAWS:
        serving.remove_boundary(server)  # the flaws, or `--state signed` which brings its own integrity
    if nonces.race is not None:
        server.middleware.append(race_gate.announced)  # the width of a race its gate holds open
    scheme: states.Scheme
    if written.own_state:
        scheme = styles.own_ledger.Tickets(ttl_seconds, record="no-ledger" not in active)
    else:
        scheme = _scheme(active, state, nonces, shared_key, ttl_seconds)
    tools: list[tuple[str, confirm.Effect]] = [(tool_name, "delete")]
    if second_tool:
        tools.append((SECOND_TOOL, "truncate"))  # same policy, same scheme, hence the same ledger
    for name, effect in tools:
        tool = confirm.ConfirmTool(
            name, effect, path_arg, policy, scheme, form, active, written, nonces.race, links
        )
        _add_confirm_tool(server, tool, path_arg)
    _add_stat_tool(server, paths.PathPolicy.create(root, mode=paths_mode))
    return server


def _check_options(
    tool_name: str, path_arg: str, paths_mode: str, form: str, state: str, second_tool: bool
) -> None:
    if not path_arg.isidentifier() or path_arg == "ctx":
        raise ValueError(f"--path-arg must be a Python identifier other than 'ctx', got {path_arg!r}")
    if paths_mode not in get_args(paths.PathMode) or form not in forms.FORMS:
        raise ValueError(f"bad paths mode {paths_mode!r} or form {form!r}")
    if state not in get_args(StateMode):
        raise ValueError(f"bad state {state!r}: use {' or '.join(get_args(StateMode))}")
    taken = {"stat_file", *([SECOND_TOOL] if second_tool else [])}
    if tool_name in taken:
        raise ValueError(f"--tool-name {tool_name!r} is taken by another tool of this server")


# What a style with single-use tickets of its own replaces: the nonce ledger and its backends.
_OWN_STATE_REPLACES = flaw_switches.STATE_FLAWS | {"per-process-ledger", "check-then-delete-ledger"}


def _style(name: str, active: frozenset[str], state: str, ledger: str, shared: bool) -> styles.Style:
    if name not in styles.STYLES:
        raise ValueError(f"unknown style {name!r}: use {', '.join(styles.STYLES)}")
    written = styles.STYLES[name]
    clash = sorted(active & _OWN_STATE_REPLACES)
    # Its tickets live in one process: replicas sharing a key would each honour them.
    if written.own_state and (clash or state != "sealed" or ledger != "memory" or shared):
        raise ValueError(
            f"--style {name} keeps single-use tickets of its own, in one process: "
            f"no --state, --ledger, --shared-key-env or {clash or 'ledger flaws'}"
        )
    return written


def _policy(root: str | Path, paths_mode: paths.PathMode, active: frozenset[str]) -> paths.PathPolicy:
    link_check: paths.LinkCheck = "every-component"
    if "link-after-resolve" in active:
        link_check = "after-resolve"
    elif "link-last-component-only" in active:
        link_check = "last-component"
    elif "lexical-containment" in active:
        link_check = "none"  # "the path as written is inside" is the whole check
    containment: paths.Containment = "resolved"
    if "no-containment" in active:
        containment = "none"
    elif "prefix-containment" in active:
        containment = "prefix"
    elif "lexical-containment" in active:
        containment = "lexical"
    return paths.PathPolicy.create(
        root,
        mode=paths_mode,
        containment=containment,
        link_check=link_check,
        allow_directories="deletes-directories" in active,
        cut_at_nul="truncates-at-nul" in active,
    )


def _scheme(
    active: frozenset[str], state: StateMode, nonces: ledgers.Ledger, key: bytes | None, ttl: float
) -> states.Scheme:
    key = key if key is not None else secrets.token_bytes(32)
    if "principal-unbound-state" in active:
        return states.SignedState(nonces, key, ttl, principal=None)  # FLAW principal-unbound-state
    if "plain-state" in active:
        return states.PlainState(nonces)
    if "trusting-state" in active:
        return states.TrustingState(ttl)
    if "unbound-state" in active:
        return states.UnboundState(nonces)
    if state in ("signed", "signed-and-sealed"):
        return states.SignedState(nonces, key, ttl, principal=identity.principal)
    return states.SealedState(nonces)


_VERBS: dict[confirm.Effect, str] = {"delete": "delete", "truncate": "empty"}


def _add_confirm_tool(server: MCPServer, tool: confirm.ConfirmTool, path_arg: str) -> None:
    async def handler(ctx: Context, **arguments: str) -> str | InputRequiredResult:
        return await tool(arguments[path_arg], ctx)

    name, verb = tool.name, _VERBS[tool.effect]
    handler.__name__ = handler.__qualname__ = name
    # The argument's name is configurable, so the signature the SDK reads is built here.
    described = Annotated[str, Field(description=f"Path of the file to {verb}, inside the server's root.")]
    handler.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(path_arg, inspect.Parameter.KEYWORD_ONLY, annotation=described),
            inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context),
        ]
    )
    handler.__annotations__ = {path_arg: described, "ctx": Context}
    server.add_tool(
        handler,
        name=name,
        description=f"{verb.capitalize()} one file inside the server's root. Asks the user to confirm first.",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
        ),
    )


def _add_stat_tool(server: MCPServer, stat_policy: paths.PathPolicy) -> None:
    """A harmless neighbour: states are presented on it, and discovery must skip it."""

    def stat_file(path: str) -> int:
        try:
            return stat_policy.resolve(path).identity.size
        except paths.Refused as exc:
            raise ToolError(str(exc)) from None

    server.add_tool(
        stat_file,
        name="stat_file",
        description="Size in bytes of one file inside the server's root.",
        annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True),
    )


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
        "--state",
        default="sealed",
        choices=get_args(StateMode),
        help="sealed: the SDK's boundary seals the state; signed: no boundary, readable JSON under an HMAC; "
        "signed-and-sealed: the HMAC-signed state inside the SDK's seal (a redundant hand-rolled signer)",
    )
    add("--second-tool", action="store_true", help="also offer truncate_file, confirmed the same way")
    add(
        "--style",
        default="quoted",
        choices=sorted(styles.STYLES),
        help="how the same careful server is written: quoted (the default), markdown-escaped, code-span, "
        "own-ledger (see styles/__init__.py)",
    )
    add(
        "--transport",
        default="stdio",
        choices=("stdio", "http"),
        help="http serves http://127.0.0.1:PORT/mcp",
    )
    add("--port", type=int, default=8000, help="HTTP port (binds 127.0.0.1 only)")
    add(
        "--start-delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait this long before serving, as a server that opens a database or loads a model does "
        "(the isolation bench's slow start)",
    )
    add(
        "--late-first-question",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="the first question reaches its client this long after its lifetime began, as on a loaded "
        "machine (not a flaw: an answer sent at once then arrives late)",
    )
    add(
        "--auth",
        choices=("none", "bearer"),
        default="none",
        help="bearer: over HTTP, every request needs a token from --tokens-env (else HTTP 401)",
    )
    add(
        "--tokens-env",
        metavar="NAME",
        help="env var holding alice=TOKEN,mallory=TOKEN",
    )
    add(
        "--token",
        metavar="TOKEN",
        help="alice's bearer token on the command line, as many real servers take one: the audit must "
        "redact it from every report as it redacts the header carrying it",
    )
    add(
        "--approve-link",
        metavar="WEBHOOK",
        help="the person approves each question by a link posted to WEBHOOK; the retry with the state "
        "acts only once it was followed (approve_link.py)",
    )
    add(
        "--link-decides",
        action="store_true",
        help="with --approve-link: the link alone approves; the in-band answer's form is never read, only "
        "a decline or cancel in it closes the question (as mcp-airlock's oob mode)",
    )
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
    tokens = None
    if args.auth == "bearer":
        if args.transport != "http" or not (args.tokens_env or args.token):
            parser.error("--auth bearer needs --transport http and --tokens-env NAME or --token TOKEN")
        try:
            tokens = identity.parse_tokens(os.environ.get(args.tokens_env, "")) if args.tokens_env else {}
        except ValueError as exc:
            parser.error(f"{args.tokens_env}: {exc}")
        if args.token:
            tokens = {**tokens, "alice": args.token}
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
            second_tool=args.second_tool,
            state=args.state,
            tokens=tokens,
            style=args.style,
            late_first_question=args.late_first_question,
            approve_link_to=args.approve_link,
            link_decides=args.link_decides,
        )
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    time.sleep(args.start_delay)
    if args.transport == "http":
        serving.serve_http(server, args.port)
    else:
        server.run(transport="stdio")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
