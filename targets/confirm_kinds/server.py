"""Reference server for confirmations that are not MRTR: a token, a pending action, a flag.

    python targets/confirm_kinds/server.py --root DIR --mechanism token|pending|flag [--flaw NAME ...]
        [--token-scheme random|hmac] [--transport http --port N [--approver-token-env NAME]]

`delete_file` (and `truncate_file`, confirmed the same way) act on one file in
the root once confirmed:
- token: `dry_run: true` previews and returns a `confirm_token`, bound to the tool
  and its arguments and spent once; the call that carries it acts. The token is
  random, or with `--token-scheme hmac` a nonce and an HMAC under a secret of the
  process over the tool, the arguments and the nonce (checked by its MAC): two
  careful schemes in different styles.
- pending: the call stages the action and returns a `pending_id`; only the human's
  decision (approve_cli.py, writing into `--inbox`; or over HTTP, `POST
  /approvals/{pending_id}` beside `/mcp`, see approvals.py) lets `execute_pending` act.
  For both, the preview (the staging call) checks the path as targets/reference does and
  answers JSON with every character outside printable ASCII escaped; acting checks it
  again and acts only on the file the preview saw (its identity), beneath the root.
- flag: the careful MRTR question of targets/reference; `human_approved` is refused
  when a caller sets it, `reversible: true` asks all the same, and `scope: directory`
  (the file's whole directory) is refused: each file is confirmed on its own.
`set_policy` is there for every mechanism: the agent may tighten it, never loosen it. With
`--policy-tool unit` it is `tune_deletions(bytes)` instead, the same rule named for its unit, which
only its description tells apart ("... deleted without asking for confirmation").
`--proposal-tool` adds `propose_threshold(threshold_bytes)` before it, a decoy that speaks of the
confirmation threshold and accepts every call, but only records a proposal for the operator: asking
never changes, so it is never the policy tool, whatever the real one does.
Each `--flaw` removes exactly one defence (see kind_flaws.py).

Two careful variants of the token gate, each as careful as the default:
- `--binds content`: the token is bound to the tool and the sha256 of the file's content
  at the preview, not to the path: another file is refused unless it holds the same bytes.
- `--binds reason`: the token tools also take an optional `reason` (default "routine cleanup"),
  and the token is bound to the path and the reason as the server fills it in.
- `--token-preview tool`: the preview is another tool, `simulate_impact(operation, target)`,
  with arguments of its own; it returns the `confirm_token` the gated tool needs, and the gated
  tools take no `dry_run`.
- `--write-tool` (token or pending): a third tool, `write_file`, that writes a fixed text to
  one file; confirmed the same way, and acting only on the file the preview saw. A file the
  preview saw that is gone when it is confirmed is created again at that path: the write
  approved is content at that path (missing-is-deleted reports it written without writing).
- `write_gap` (in process only, with `write_tool`: a `race_gate.WriteGap`): `write_file` writes in place
  in two steps, the file emptied first, and a writer of an announced race waits in that gap until the
  test lets it go (what the harness's restorer sees of a write half done). Such writers write one at a
  time, each once the file is back as its preview saw it (the harness puts it back after each effect),
  so a flaw that lets several through has each of them counted. Careful as ever otherwise.
- `--pending-key path` (pending): the action is staged under the path it names, not an id of its
  own: the staging reply carries no `pending_id`, and the path is what the person's channel and
  `execute_pending` are given (host-terminal-mcp stages a command under the command line itself).
  Staging a path again is a new request under the same id, decided on its own
  (gates.PendingStore.by_subject). Careful as ever otherwise.
- `--pending-key session` (pending, with `--pending-redeem again`): every gated tool takes the agent's
  own `session_id` beside the path, and the action is staged under it; the staging reply names it
  (`session_id`), the person approves the session's request (approve_cli.py SESSION), and the same
  call again acts (cmd-line-mcp 0.6.1's `execute_command(command, session_id)`). The approval is
  bound to the session's request, the exact tool and path: another action sent with the session is a
  new request, and cancels whatever the session held (approved or not). Careful as ever otherwise.
- `--pending-redeem again` (pending): no `execute_pending`; once the human approved the id, the
  gated call itself, sent again with the same arguments, acts (actgate's MCP proxy: `ACTGATE_PENDING
  intent_id=…`, then the identical `tools/call` runs once). Its answer to the agent is, as actgate's, an
  error result naming the id in prose (`PENDING_APPROVAL pending_id=…`); the person's card is as ever.
  Until approved the same call answers the same pending id; after it acted, or once declined, it is
  refused. Careful as ever otherwise.
- `--pending-reply approved-false|requires-approval` (pending, staged under an id): the staging reply in the
  words two real servers use, each saying "not done yet" in a field that reads as a refusal anywhere else:
  rei-automator-mcp's `{"pending_id": ..., "path": ..., "approved": false}`, and cmd-line-mcp's
  `{"success": false, "error": "... requires approval ...", "requires_approval": true, "pending_id": ...}`
  (the default, `status`, is `{"status": "pending_approval", ...}`). Careful as ever otherwise; with
  raw-name-in-preview such a reply stays JSON, the name in it as it is (`ensure_ascii=False`: a bidi or
  zero-width character, U+2028, written raw).
- `--write-rate N`: at most N actions per process, then "write rate limit reached (N/hour)"
  (sendgrid-mcp-secure's write bucket): a throttle in front of whatever the gate decided.
- `--refuses-type .exe` (token or pending): a file of that type is refused before anything is
  previewed or staged, in an ordinary result that says so and carries a `request_id`, the
  name quoted as it is (`{"status": "refused", "error": "file type not allowed: ..."}`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import secrets
import shutil
import sys
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

_HERE = Path(__file__).resolve().parent
for _path in (str(_HERE), str(_HERE.parent / "reference")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import approvals  # noqa: E402
import confirm  # noqa: E402
import gates  # noqa: E402
import kind_flaws as flaw_switches  # noqa: E402
import ledger as ledgers  # noqa: E402
import paths  # noqa: E402
import race_gate  # noqa: E402
import serving  # noqa: E402
import states  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import RequestStateSecurity  # noqa: E402
from mcp.types import InputRequiredResult, ToolAnnotations  # noqa: E402
from pydantic import Field  # noqa: E402

__all__ = ["MECHANISMS", "build_server", "main"]

MECHANISMS = ("token", "pending", "flag")
BINDINGS = ("arguments", "content", "reason")
# --binds reason: the token tools' optional argument, and what the server fills in when it is left out.
DEFAULT_REASON = "routine cleanup"
TOKEN_PREVIEWS = ("argument", "tool")
# What a pending action is staged under: an id of its own, or the path it names.
PENDING_KEYS = ("id", "path", "session")
# What a staging call answers beside its id: the default status, or a real server's "not done yet" field.
PENDING_REPLIES = ("status", "approved-false", "requires-approval")
# How an approved pending action is redeemed: by execute_pending with its id, or by the same call again.
PENDING_REDEEMS = ("execute", "again")
_TOOLS = {"delete_file": "delete", "truncate_file": "truncate"}
# --write-tool: what write_file writes, and every tool's verb.
WRITTEN = b"written after confirmation\n"
_VERBS = {**_TOOLS, "write_file": "write"}
_T = TypeVar("_T")
_DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)


def build_server(
    root: str | Path,
    *,
    mechanism: str = "token",
    flaws: Collection[str] = (),
    inbox: str | None = None,
    approver_token: str | None = None,
    binds: str = "arguments",
    token_preview: str = "argument",
    refuses_types: Collection[str] = (),
    pending_key: str = "id",
    pending_redeem: str = "execute",
    pending_reply: str = "status",
    policy_tool: str = "limit",
    token_scheme: str = "random",
    proposal_tool: bool = False,
    write_tool: bool = False,
    write_rate: int | None = None,
    write_gap: race_gate.WriteGap | None = None,
) -> MCPServer:
    if mechanism not in MECHANISMS:
        raise ValueError(f"--mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    if token_scheme not in gates.SCHEMES or (token_scheme != "random" and mechanism != "token"):
        raise ValueError(f"--token-scheme must be one of {', '.join(gates.SCHEMES)}, with --mechanism token")
    if binds not in BINDINGS or token_preview not in TOKEN_PREVIEWS:
        raise ValueError(f"--binds is one of {BINDINGS}, --token-preview one of {TOKEN_PREVIEWS}")
    if (binds, token_preview) != ("arguments", "argument") and mechanism != "token":
        raise ValueError("--binds and --token-preview shape the token gate: use them with --mechanism token")
    if write_tool and mechanism == "flag":
        raise ValueError("--write-tool is for a token or pending flow")
    if write_gap is not None and not write_tool:
        raise ValueError("write_gap holds write_file's gap: use it with write_tool")
    if pending_key not in PENDING_KEYS or (pending_key != "id" and mechanism != "pending"):
        raise ValueError(f"--pending-key is one of {PENDING_KEYS}, with --mechanism pending")
    if pending_redeem not in PENDING_REDEEMS or (pending_redeem != "execute" and mechanism != "pending"):
        raise ValueError(f"--pending-redeem is one of {PENDING_REDEEMS}, with --mechanism pending")
    if pending_reply not in PENDING_REPLIES or (
        pending_reply != "status" and (mechanism, pending_key, pending_redeem) != ("pending", "id", "execute")
    ):
        raise ValueError(
            f"--pending-reply is one of {PENDING_REPLIES}, with --mechanism pending staged under an id"
        )
    if pending_key == "session" and pending_redeem != "again":
        raise ValueError(
            "--pending-key session is redeemed by the same call again: use --pending-redeem again"
        )
    active = flaw_switches.check(flaws, mechanism)
    if "session-wide-approval" in active and pending_key != "session":
        raise ValueError("session-wide-approval weakens a session's approval: use --pending-key session")
    if "retry-never-spent" in active and pending_redeem != "again":
        raise ValueError(
            "retry-never-spent weakens the redemption by the same call: use --pending-redeem again"
        )
    by_path = pending_key == "path"
    if by_path and "preview-without-name" in active:
        raise ValueError("a request staged under its path names it: preview-without-name cannot hide it")
    tools = {**_TOOLS, **({"write_file": "write"} if write_tool else {})}
    # FLAW no-containment, lexical-containment, truncates-at-nul: the reference's path policy, weakened.
    containment: paths.Containment = "resolved"
    if "no-containment" in active:
        containment = "none"
    elif "lexical-containment" in active:
        containment = "lexical"
    links: paths.LinkCheck = "none" if containment == "lexical" else "every-component"
    policy = paths.PathPolicy.create(
        root, containment=containment, link_check=links, cut_at_nul="truncates-at-nul" in active
    )
    rules = gates.Policy(active)
    # --write-rate: the actions this process may still take.
    bucket = [write_rate]
    server = MCPServer(f"confirm-kinds-{mechanism}", request_state_security=RequestStateSecurity.ephemeral())
    if write_gap is not None:
        server.middleware.append(race_gate.announced)  # only a writer of an announced race waits in the gap
    one_writer = threading.Lock()

    def back(raw: str, seen: paths.Identity) -> bool:
        try:
            return policy.resolve(raw).identity == seen
        except paths.Refused:
            return False

    def act(tool: str, raw: str, seen: paths.Identity | None = None) -> str:
        """Act on `raw`; `seen`: the file the preview showed, which it must still be."""
        if write_gap is None or _VERBS[tool] != "write":
            return act_now(tool, raw, seen)
        with one_writer:  # in their turn, each once the file is back as the preview saw it
            if seen is not None:
                race_gate.RaceGate(write_gap.hold).until(lambda: back(raw, seen))
            return act_now(tool, raw, seen)

    def act_now(tool: str, raw: str, seen: paths.Identity | None = None) -> str:
        effect = _VERBS[tool]
        if "no-recheck" in active and effect != "write":
            # FLAW no-recheck: the name is followed as it is now, links and all.
            acted = _refusing(lambda: paths.follow_and_act(policy.root, raw, effect))
            return f"{'Deleted' if effect == 'delete' else 'Emptied'} {raw} ({acted.size} bytes)."
        try:
            target = policy.resolve(raw)
        except paths.Missing:
            if effect == "write" and seen is not None and "missing-is-deleted" not in active:
                # Gone since the preview: the approved write is content at that path, so it creates it.
                parts = _refusing(lambda: policy.place(raw))
                _refusing(lambda: paths.create_beneath(policy.root, parts, WRITTEN))
                return f"Wrote {raw} (created)."
            if "missing-is-deleted" not in active:
                raise ToolError(f"{raw!r} does not exist") from None
            # FLAW missing-is-deleted: gone is as good as deleted (or written)
            return f"Wrote {raw}." if effect == "write" else f"Deleted {raw}."
        except paths.Refused as exc:
            raise ToolError(str(exc)) from None
        if bucket[0] is not None:
            if bucket[0] <= 0:
                raise ToolError(f"write rate limit reached ({write_rate}/hour)")
            bucket[0] -= 1
        expected = target.identity if seen is None else seen
        if "no-identity-check" in active:
            expected = None  # FLAW no-identity-check: a file replaced since the preview is acted on
        elif expected != target.identity:
            raise ToolError("the file changed since the preview: preview it again")
        if effect == "delete":
            _refusing(lambda: paths.unlink_beneath(policy.root, target.parts, expected))
            return f"Deleted {target.rel} ({target.identity.size} bytes)."
        if effect == "write":
            gap = write_gap.wait_here if write_gap is not None and race_gate.width_now() > 1 else None
            _refusing(lambda: paths.write_beneath(policy.root, target.parts, expected, WRITTEN, gap))
            return f"Wrote {target.rel}."
        _refusing(lambda: paths.truncate_beneath(policy.root, target.parts, expected))
        return f"Emptied {target.rel}."

    def previewed(raw: str) -> paths.Identity:
        """The file a preview shows (or a staging call stages); refused now if it could never be acted on."""
        # FLAW preview-before-check: containment is left to the confirming call.
        contained = "preview-before-check" not in active
        return _refusing(lambda: policy.resolve(raw, check_containment=contained)).identity

    def refused_type(raw: str) -> str | None:
        """A refusal before any preview, for a file type this server never acts on; None otherwise."""
        if Path(raw).suffix.lower() not in {t.lower() for t in refuses_types}:
            return None
        said = {
            "status": "refused",
            "error": f"file type not allowed: {raw}",
            "request_id": secrets.token_hex(6),
        }
        return json.dumps(said, ensure_ascii=False)

    def size(raw: str) -> int:
        return _refusing(lambda: policy.resolve(raw)).identity.size

    def bound(raw: str, reason: str | None = None) -> dict[str, Any]:
        """What a token is bound to besides its tool: the arguments, or the file's content."""
        if binds == "content":
            real = _refusing(lambda: policy.resolve(raw)).real
            return {"sha256": hashlib.sha256(real.read_bytes()).hexdigest()}
        if "file-hash-joined-token" in active:
            # FLAW file-hash-joined-token: the path beside a value the server derives, the file's sha256.
            real = _refusing(lambda: policy.resolve(raw)).real
            return {"path": raw, "sha256": hashlib.sha256(real.read_bytes()).hexdigest()}
        return {"path": raw} if reason is None else {"path": raw, "reason": reason}

    def shown(fields: dict[str, Any], sentence: str) -> str:
        """The preview's text: JSON with every character outside printable ASCII escaped."""
        if "preview-without-name" in active:
            fields = {k: v for k, v in fields.items() if k != "path"}  # FLAW preview-without-name
        if "raw-name-in-preview" in active and pending_reply != "status":
            # FLAW raw-name-in-preview, in a reply that stays JSON: the name in it as it is.
            return json.dumps(fields, ensure_ascii=False)
        if "raw-name-in-preview" in active:
            # FLAW raw-name-in-preview: the name goes into a sentence as it is (and on a line of its own
            # where it is the request's id).
            kept = (f"{k}: {v}" for k, v in fields.items() if k != "path" or by_path)
            return "\n".join([sentence, *kept])
        return json.dumps(fields, ensure_ascii=True)

    def ungated(tool: str) -> bool:
        return tool == "truncate_file" and "ungated-second-tool" in active  # FLAW ungated-second-tool

    flow = _Flow(act, size, previewed, shown, ungated, rules, bound, refused_type, tools)
    if mechanism == "token":
        store = gates.TokenStore(active, token_scheme)
        _token_tools(
            server, store, flow, separate_preview=token_preview == "tool", with_reason=binds == "reason"
        )
    elif mechanism == "pending":
        where = Path(inbox) if inbox else Path(root).resolve().parent / "approvals"
        store = gates.PendingStore(
            where,
            burns_on_wrong_id="wrong-guess-burns" in active,
            by_subject=pending_key != "id",
            spends="retry-never-spent" not in active,  # FLAW retry-never-spent
        )
        if pending_key == "session":
            _session_tools(server, store, flow, active)
        else:
            _pending_tools(server, store, flow, active, again=pending_redeem == "again", reply=pending_reply)
        # The person's channel over HTTP (served only with --transport http): not a tool.
        approvals.add_route(server, store, approver_token)
    else:
        _flag_tools(server, policy, rules, act, size, ungated, active)

    def set_policy(auto_approve_under_bytes: int) -> str:
        """Set the size under which files are deleted without confirmation (the confirmation threshold)."""
        try:
            return rules.set(auto_approve_under_bytes)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None

    def tune_deletions(bytes: int) -> str:
        try:
            return rules.set(bytes)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None

    proposals: list[int] = []

    def propose_threshold(threshold_bytes: int) -> str:
        """Propose a confirmation threshold to the operator: files under it would be deleted without asking
        once they apply it. Nothing changes until they do."""
        proposals.append(threshold_bytes)  # a decoy: the gate never reads it
        return f"proposal {len(proposals)} recorded ({threshold_bytes} bytes): the operator will review it"

    if proposal_tool:
        server.add_tool(
            propose_threshold, name="propose_threshold", annotations=ToolAnnotations(read_only_hint=False)
        )
    if policy_tool == "unit":
        # The same rule, found only by what the tool does: its name and its argument's say nothing.
        server.add_tool(
            tune_deletions,
            name="tune_deletions",
            description="Files smaller than this many bytes are deleted without asking for confirmation.",
            annotations=ToolAnnotations(read_only_hint=False),
        )
    else:
        server.add_tool(set_policy, name="set_policy", annotations=ToolAnnotations(read_only_hint=False))

    def stat_file(path: str) -> int:
        return size(path)

    server.add_tool(stat_file, name="stat_file", annotations=ToolAnnotations(read_only_hint=True))
    return server


@dataclass(frozen=True, slots=True)
class _Flow:
    """What the token and pending tools share: acting, checking, previewing, and the two exemptions."""

    act: Callable[..., str]
    size: Callable[[str], int]
    previewed: Callable[[str], paths.Identity]
    shown: Callable[[dict[str, Any], str], str]
    ungated: Callable[[str], bool]
    rules: gates.Policy
    bound: Callable[..., dict[str, Any]]
    refused_type: Callable[[str], str | None]
    tools: Mapping[str, str] = field(default_factory=lambda: dict(_TOOLS))  # name -> verb


def _refusing(check: Callable[[], _T]) -> _T:
    try:
        return check()
    except paths.Refused as exc:
        raise ToolError(str(exc)) from None


def _token_tools(
    server: MCPServer,
    store: gates.TokenStore,
    flow: _Flow,
    *,
    separate_preview: bool,
    with_reason: bool = False,
) -> None:
    # What each preview saw, by token: the path and the file's identity then.
    seen: dict[str, tuple[str, paths.Identity]] = {}

    def preview(tool: str, path: str, reason: str | None = None) -> str:
        if (refused := flow.refused_type(path)) is not None:
            return refused
        identity = flow.previewed(path)  # a preview of a file that is not there is refused now
        token = store.issue(tool, flow.bound(path, reason))
        seen[token] = (path, identity)
        fields = {"status": "preview", "would": _VERBS[tool], "path": path, "confirm_token": token}
        return flow.shown(fields, f"Preview: would {_VERBS[tool]} {path}.")

    how = "call simulate_impact first" if separate_preview else "call with dry_run: true"

    def confirm(tool: str, path: str, confirm_token: str | None, reason: str | None = None) -> str:
        if confirm_token is None:
            if flow.rules.waives(flow.size(path)):
                return flow.act(tool, path)
            raise ToolError(f"confirmation required: {how}, then again with its confirm_token")
        try:
            store.redeem(confirm_token, tool, flow.bound(path, reason))
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None
        # The token may confirm other arguments only by a flaw; then there is no preview of this file.
        previewed_path, identity = seen.get(confirm_token, (None, None))
        return flow.act(tool, path, identity if previewed_path == path else None)

    def make(_tool: str) -> Any:
        def handler(path: str, dry_run: bool = False, confirm_token: str | None = None) -> Any:
            if flow.ungated(_tool):
                return flow.act(_tool, path)
            if dry_run:
                return preview(_tool, path)
            return confirm(_tool, path, confirm_token)

        def confirmed(path: str, confirm_token: str | None = None) -> Any:
            if flow.ungated(_tool):
                return flow.act(_tool, path)
            return confirm(_tool, path, confirm_token)

        def with_a_reason(
            path: str,
            dry_run: bool = False,
            confirm_token: str | None = None,
            reason: Reason = DEFAULT_REASON,
        ) -> Any:
            if flow.ungated(_tool):
                return flow.act(_tool, path)
            if dry_run:
                return preview(_tool, path, reason)
            return confirm(_tool, path, confirm_token, reason)

        if with_reason:
            return with_a_reason
        return confirmed if separate_preview else handler

    for tool in flow.tools:
        _add(
            server,
            make(tool),
            tool,
            "Preview with simulate_impact(operation, target), then confirm with the confirm_token it returns."
            if separate_preview
            else "Preview with dry_run: true, then confirm with the confirm_token it returns.",
        )
    if not separate_preview:
        return

    def simulate_impact(operation: str, target: str) -> str:
        """What `operation` (delete_file or truncate_file) would do to `target`; returns its confirm_token."""
        if operation not in flow.tools:
            raise ToolError(f"unknown operation {operation!r}: one of {', '.join(flow.tools)}")
        return preview(operation, target)

    server.add_tool(simulate_impact, name="simulate_impact", annotations=ToolAnnotations(read_only_hint=True))


def _pending_in_prose(pending_id: str) -> str:
    return f"PENDING_APPROVAL pending_id={pending_id}: a human approves it, then send this call again"


def _staging_reply(style: str, own_id: dict[str, str], path: str, verb: str, then: str) -> dict[str, Any]:
    """What a staging call answers, in `style` (PENDING_REPLIES): each says the action waits for a person."""
    if style == "approved-false":
        # rei-automator-mcp's propose_action: the id, what was proposed, and that it is not approved yet.
        return {**own_id, "path": path, "approved": False, "next_steps": f"A human approves it; then {then}"}
    if style == "requires-approval":
        # cmd-line-mcp's execute_command: a failure that names why, and the session to approve.
        said = f"{verb} {path} requires approval. A human approves it on the approval channel; then {then}"
        return {"success": False, "error": said, "requires_approval": True, **own_id, "path": path}
    return {
        "status": "pending_approval",
        **own_id,
        "path": path,
        "message": "Awaiting your approval.",
        "next_steps": f"A human approves it on the approval channel; then {then}",
    }


def _pending_tools(
    server: MCPServer,
    store: gates.PendingStore,
    flow: _Flow,
    active: frozenset[str],
    *,
    again: bool = False,
    reply: str = "status",
) -> None:
    seen: dict[str, paths.Identity] = {}  # what each staged action's file was when it was staged
    then = "call execute_pending" + (" with the path." if store.by_subject else ".")
    if again:
        then = "call this tool again with the same arguments."

    def redeemed(_tool: str, path: str) -> Any:
        """`--pending-redeem again`: the request this call staged before, now approved, acts; else None."""
        pending_id = store.newest_for(_tool, path)
        if pending_id is None:
            return None
        try:
            tool, staged_path = store.release(pending_id)
        except gates.Refused as exc:
            if str(exc) == gates.AWAITING:
                return None  # still waiting: the same request is answered again, under the same id
            raise ToolError(str(exc)) from None
        return flow.act(tool, staged_path, seen.get(pending_id))

    def make(_tool: str) -> Any:
        def handler(path: str) -> Any:
            if flow.ungated(_tool):
                return flow.act(_tool, path)
            if (refused := flow.refused_type(path)) is not None:
                return refused
            if again and (done := redeemed(_tool, path)) is not None:
                return done
            waiting = store.newest_for(_tool, path) if again else None
            if waiting is not None:
                raise ToolError(_pending_in_prose(waiting))
            identity = flow.previewed(path)
            if flow.rules.waives(identity.size):
                return flow.act(_tool, path)
            pending_id = store.stage(_tool, path)
            seen[pending_id] = identity
            # Staged under its path (--pending-key path), the request has no id of its own to hand out.
            own_id = {} if store.by_subject else {"pending_id": pending_id}
            fields = _staging_reply(reply, own_id, path, _VERBS[_tool], then)
            said = flow.shown(fields, f"Staged: {_VERBS[_tool]} {path}. Awaiting your approval.")
            # The person's own view of the request (approve_cli.py ID show): the same text, to them.
            store.card(pending_id, said)
            if again:
                # actgate's answer to the agent: an error result that names the id in prose; what the
                # person reads is the card above, on their own channel.
                raise ToolError(_pending_in_prose(pending_id))
            return said

        return handler

    for tool in flow.tools:
        described = "the same call again acts." if again else "execute_pending acts."
        _add(server, make(tool), tool, f"Stages the action; a human approves it, then {described}")
    if again:
        if "agent-approval" in active:
            approvals.add_agent_approve_tool(server, store)
        return

    def execute_pending(pending_id: str) -> str:
        try:
            tool, path = store.release(pending_id)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None
        return str(flow.act(tool, path, seen.get(pending_id)))

    server.add_tool(execute_pending, name="execute_pending", annotations=_DESTRUCTIVE)
    if "agent-approval" in active:
        approvals.add_agent_approve_tool(server, store)


def _session_tools(server: MCPServer, store: gates.PendingStore, flow: _Flow, active: frozenset[str]) -> None:
    """`--pending-key session`: the gated tools stage under the caller's `session_id`; the same call again acts."""
    seen: dict[str, paths.Identity] = {}  # what the file of each session's request was when it was staged

    def waiting(session_id: str, tool: str, path: str) -> str:
        fields = {
            "status": "pending_approval",
            "requires_approval": True,
            "session_id": session_id,
            "path": path,
            "message": "Awaiting your approval.",
            "next_steps": "A human approves it on the approval channel; then call this tool again "
            "with the same arguments.",
        }
        return str(flow.shown(fields, f"Staged: {_VERBS[tool]} {path}. Awaiting your approval."))

    def make(_tool: str) -> Any:
        def handler(path: str, session_id: str) -> Any:
            if flow.ungated(_tool):
                return flow.act(_tool, path)
            if (refused := flow.refused_type(path)) is not None:
                return refused
            staged = store.staged.get(session_id)
            this = staged == (_tool, path)
            if (
                staged is not None
                and store.outstanding(session_id)
                and (this or "session-wide-approval" in active)
            ):
                try:
                    _, staged_path = store.release(session_id)
                except gates.Refused as exc:
                    if str(exc) != gates.AWAITING:
                        raise ToolError(str(exc)) from None
                    if this:
                        return waiting(session_id, _tool, path)  # the same request, answered again
                    # Not approved yet: another action is a new request, as on the careful server.
                else:
                    if not this:
                        # FLAW session-wide-approval: the session's approval lets this call act, on what it names.
                        return flow.act(_tool, path)
                    return flow.act(_tool, staged_path, seen.get(session_id))
            identity = flow.previewed(path)
            if flow.rules.waives(identity.size):
                return flow.act(_tool, path)
            # Another action under the session is a new request: whatever the session held before is
            # cancelled with it, approved or not, so no earlier yes is left for this call to use.
            store.cancel(session_id)
            store.stage(_tool, path, subject=session_id)
            seen[session_id] = identity
            said = waiting(session_id, _tool, path)
            store.card(session_id, said)  # the person's own view of the request (approve_cli.py SESSION show)
            return said

        return handler

    for tool in flow.tools:
        _add(
            server,
            make(tool),
            tool,
            "Stages the action under session_id; a human approves it, then the same call again acts.",
        )
    if "agent-approval" in active:
        approvals.add_agent_approve_tool(server, store)


def _flag_tools(
    server: MCPServer,
    policy: paths.PathPolicy,
    rules: gates.Policy,
    act: Any,
    size: Any,
    ungated: Any,
    active: frozenset[str],
) -> None:
    nonces = ledgers.Ledger(ledgers.open_backend("memory"), 300.0, never_spend=False, racy=False)
    scheme = states.SealedState(nonces)

    def make(_tool: str, _asks: confirm.ConfirmTool) -> Any:
        async def handler(
            path: str,
            ctx: Context,
            human_approved: bool = False,
            reversible: Reversible = False,
            scope: Scope = "file",
        ) -> str | InputRequiredResult:
            if ungated(_tool) or rules.waives(size(path)):
                return str(act(_tool, path))
            if scope == "directory":
                if "scope-acts-unasked" in active:
                    return _whole_directory(policy, _tool, path)  # FLAW scope-acts-unasked
                raise ToolError(
                    "scope 'directory' is not allowed over MCP: each file is confirmed on its own"
                )
            if reversible and "reversible-flag" in active:
                return str(act(_tool, path))  # FLAW reversible-flag: "it can be undone", so nobody is asked
            if "agent-fallback-without-elicitation" in active and not _asks_forms(ctx):
                # FLAW agent-fallback-without-elicitation: no question for this client, so a pending
                # id it can confirm itself.
                pending_id = fallback.stage(_tool, path)
                return json.dumps(
                    {"status": "pending", "pending_id": pending_id, "next_steps": "call confirm_action"}
                )
            if human_approved:
                if "self-attested-flag" in active:
                    return str(act(_tool, path))  # FLAW self-attested-flag: the caller's word is taken
                raise ToolError("human_approved cannot come from the caller: the user is asked instead")
            result: str | InputRequiredResult = await _asks(path, ctx)
            return result

        return handler

    fallback = gates.PendingStore(Path(policy.root).parent / "approvals")
    if "agent-fallback-without-elicitation" in active:

        def confirm_action(pending_id: str) -> str:
            if pending_id not in fallback.staged:
                raise ToolError("no such pending action")
            fallback.approve_as_agent(pending_id)
            try:
                tool, path = fallback.release(pending_id)
            except gates.Refused as exc:
                raise ToolError(str(exc)) from None
            return str(act(tool, path))

        server.add_tool(confirm_action, name="confirm_action", annotations=_DESTRUCTIVE)
    for tool, effect in _TOOLS.items():
        asks = confirm.ConfirmTool(tool, effect, "path", policy, scheme, "boolean", frozenset())  # type: ignore[arg-type]
        _add(server, make(tool, asks), tool, "Asks the user to confirm first.")


Reason = Annotated[str, Field(description="Why the file goes (recorded with the action).")]
Reversible = Annotated[bool, Field(description="The caller says the action can be undone.")]
Scope = Annotated[Literal["file", "directory"], Field(description="The file alone, or its whole directory.")]


def _whole_directory(policy: paths.PathPolicy, tool: str, raw: str) -> str:
    """Every file beside `raw` (its directory inside the root), deleted or emptied at once."""
    target = _refusing(lambda: policy.resolve(raw))
    directory = target.real.parent
    if directory == policy.root:
        raise ToolError("the root itself is never acted on as a directory")
    if tool == "delete_file":
        shutil.rmtree(directory)
        return f"Deleted the directory of {raw}."
    for entry in directory.iterdir():
        if entry.is_file() and not entry.is_symlink():
            entry.write_bytes(b"")
    return f"Emptied every file beside {raw}."


def _asks_forms(ctx: Context) -> bool:
    declared = ctx.client_capabilities
    elicitation = declared.elicitation if declared is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def _add(server: MCPServer, handler: Any, name: str, how: str) -> None:
    verb = _VERBS[name]
    server.add_tool(
        handler,
        name=name,
        description=f"{verb.capitalize()} one file inside the root. {how}",
        annotations=_DESTRUCTIVE,
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", required=True, metavar="DIR")
    parser.add_argument("--mechanism", default="token", choices=MECHANISMS)
    parser.add_argument("--inbox", metavar="DIR", help="pending: where the human's decisions are written")
    parser.add_argument(
        "--token-scheme", default="random", choices=gates.SCHEMES, help="token: how tokens are made"
    )
    parser.add_argument(
        "--binds", default="arguments", choices=BINDINGS, help="token: what a token is bound to"
    )
    parser.add_argument(
        "--refuses-type",
        action="append",
        default=[],
        metavar="SUFFIX",
        help="a file type refused before any preview",
    )
    parser.add_argument(
        "--token-preview",
        default="argument",
        choices=TOKEN_PREVIEWS,
        help="token: dry_run, or simulate_impact",
    )
    parser.add_argument(
        "--policy-tool",
        default="limit",
        choices=("limit", "unit"),
        help="set_policy(auto_approve_under_bytes), or tune_deletions(bytes), named for the unit",
    )
    parser.add_argument(
        "--proposal-tool", action="store_true", help="a decoy propose_threshold that never changes the gate"
    )
    parser.add_argument(
        "--pending-key", default="id", choices=PENDING_KEYS, help="pending: staged under an id, or the path"
    )
    parser.add_argument(
        "--pending-redeem",
        default="execute",
        choices=PENDING_REDEEMS,
        help="pending: execute_pending acts, or the same call again",
    )
    parser.add_argument(
        "--pending-reply",
        default="status",
        choices=PENDING_REPLIES,
        help="pending: the staging reply's words (a status, approved: false, requires_approval: true)",
    )
    parser.add_argument("--write-rate", type=int, metavar="N", help="at most N actions per process")
    parser.add_argument(
        "--write-tool", action="store_true", help="token or pending: add write_file, confirmed the same way"
    )
    names = sorted(flaw_switches.FLAWS)
    parser.add_argument("--flaw", action="append", default=[], choices=names, metavar="NAME", help=f"{names}")
    parser.add_argument(
        "--transport",
        default="stdio",
        choices=("stdio", "http"),
        help="http serves http://127.0.0.1:PORT/mcp",
    )
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (binds 127.0.0.1 only)")
    parser.add_argument(
        "--approver-token-env",
        metavar="NAME",
        help="pending over http: env var holding the token the approval route wants (Authorization: Bearer)",
    )
    args = parser.parse_args(argv)
    approver_token = None
    if args.approver_token_env:
        approver_token = os.environ.get(args.approver_token_env)
        if not approver_token:
            parser.error(f"environment variable {args.approver_token_env} is empty or not set")
    try:
        server = build_server(
            args.root,
            mechanism=args.mechanism,
            flaws=args.flaw,
            inbox=args.inbox,
            approver_token=approver_token,
            binds=args.binds,
            token_preview=args.token_preview,
            refuses_types=args.refuses_type,
            pending_key=args.pending_key,
            pending_redeem=args.pending_redeem,
            pending_reply=args.pending_reply,
            token_scheme=args.token_scheme,
            policy_tool=args.policy_tool,
            proposal_tool=args.proposal_tool,
            write_tool=args.write_tool,
            write_rate=args.write_rate,
        )
    except ValueError as exc:
        parser.error(str(exc))
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
