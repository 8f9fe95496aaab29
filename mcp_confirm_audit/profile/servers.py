"""`servers:`, several servers on one root, and `server:`, which of them a step goes to.

    servers:
      stage: "python {profile_dir}/staging/stage_server.py --root {root}"
      post: "python {profile_dir}/staging/post_server.py --root {root}"
    tool: stage_invoice                       # the action; `server:` beside it names its server
    setup: [{tool: ..., server: stage}]
    effect: [{tool: list_posted, server: post}]
    confirmation: {kind: pending, pending: {execute: {tool: post_invoice, args: {invoice_id: "{id}"}, server: post}}}
    # and a person's step: `- read: {from: stderr, pattern: ...}` / `server: stage`, `- http: {url: "{url}/..."}` / `server: post`

Every server is started on the same root, and every call goes to the server of
its tool: the one a step names for it, else the first server. A tool is on one
server, so naming it for two is an error, and so is a server no `servers:` names.
The `server:` keys of calls are taken out here, before the rest of the profile
is read: each step is otherwise the same as with one server. A person's step
keeps its `server:` (checked here against `servers:`): it says whose base URL
`{url}` is, whose output a `read` reads and whose terminal a `terminal` answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
_EXAMPLE = 'e.g. \'servers: {stage: "stage-server --root {root}", post: "post-server --root {root}"}\''


@dataclass(frozen=True, slots=True)
class Servers:
    """The servers of one target, in order (the first is the default), and the server of each named tool."""

    commands: tuple[tuple[str, str], ...] = ()
    routes: Mapping[str, str] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.commands)

    def server_of(self, tool: str) -> str:
        return self.routes.get(tool, self.commands[0][0])


def servers_from(raw: Mapping[str, Any], source: str) -> tuple[dict[str, Any], Servers | None]:
    """`raw` with every `server:` key taken out, and the servers it names (None: one server, no `servers:`)."""
    where = f"profile {source}"
    out = dict(raw)
    value = out.pop("servers", None)
    if value is None:
        for path, _, _ in _named_steps(out):
            raise UsageError(f"{where}: {path} names a server, but the profile has no servers: ({_EXAMPLE})")
        for path, _ in _persons_steps(out):
            raise UsageError(f"{where}: {path} names a server, but the profile has no servers: ({_EXAMPLE})")
        return out, None
    if "command" in out:
        raise UsageError(f"{where}: give servers: or command:, not both (the first server is the command)")
    if not isinstance(value, Mapping) or not value:
        raise UsageError(f"{where}: 'servers' must name each server's command, {_EXAMPLE}")
    commands = []
    for name, command in value.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise UsageError(f"{where}: server name {name!r} must be a short word, e.g. stage")
        if not isinstance(command, str) or not command.strip():
            raise UsageError(f"{where}: server {name!r} must be a command line, {_EXAMPLE}")
        commands.append((name, command))
    known = [name for name, _ in commands]
    routes: dict[str, str] = {}
    for path, tool, server in _named_steps(out):
        if not isinstance(server, str) or server not in known:
            raise UsageError(
                f"{where}: {path} names server {server!r}, which is not one of servers: ({', '.join(known)})"
            )
        if routes.setdefault(tool, server) != server:
            raise UsageError(
                f"{where}: tool {tool!r} is named on servers {routes[tool]!r} and {server!r}; a tool is on one server"
            )
    for path, server in _persons_steps(out):
        if not isinstance(server, str) or server not in known:
            raise UsageError(
                f"{where}: {path} names server {server!r}, which is not one of servers: ({', '.join(known)})"
            )
    out["command"] = commands[0][1]
    return _without_servers(out), Servers(tuple(commands), routes)


def _named_steps(raw: Mapping[str, Any]) -> Iterator[tuple[str, str, Any]]:
    """(where, tool, server) for every step that names a server."""
    if "server" in raw:
        yield "server", str(raw.get("tool")), raw["server"]
    for index, step in enumerate(raw.get("setup") or []):
        if isinstance(step, Mapping) and "server" in step:
            yield f"setup step {index + 1}", str(step.get("tool")), step["server"]
    for index, entry in enumerate(raw.get("effect") or []):
        if isinstance(entry, Mapping) and "server" in entry:
            tool = entry.get("tool")
            name = tool.get("name") if isinstance(tool, Mapping) else tool
            yield f"effect {index + 1}", str(name), entry["server"]
    pending = _pending(raw)
    for key in ("approve", "execute"):
        call = pending.get(key)
        if isinstance(call, Mapping) and "server" in call:
            yield f"confirmation pending.{key}", str(call.get("tool")), call["server"]


def _persons_steps(raw: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(where, server) for every step of the person's (`human:`, `decline:`) that names a server."""
    confirmation = raw.get("confirmation")
    if not isinstance(confirmation, Mapping):
        return
    for kind in ("pending", "token", "waits"):
        flow = confirmation.get(kind)
        if not isinstance(flow, Mapping):
            continue
        for key in ("human", "decline"):
            steps = flow.get(key)
            named: list[tuple[str, Any]] = []
            if isinstance(steps, Mapping):  # the old one step, with its decline beside it
                named = [(f"{kind}.{key}", steps), (f"{kind}.{key}.decline", steps.get("decline"))]
            elif isinstance(steps, list):
                named = [(f"{kind}.{key}[{number}]", step) for number, step in enumerate(steps, start=1)]
            for path, step in named:
                if isinstance(step, Mapping) and "server" in step:
                    yield f"confirmation {path}", step["server"]


def _pending(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    confirmation = raw.get("confirmation")
    pending = confirmation.get("pending") if isinstance(confirmation, Mapping) else None
    return pending if isinstance(pending, Mapping) else {}


def _without_servers(raw: dict[str, Any]) -> dict[str, Any]:
    raw.pop("server", None)
    if isinstance(raw.get("setup"), list):
        raw["setup"] = [_drop(step) for step in raw["setup"]]
    if isinstance(raw.get("effect"), list):
        raw["effect"] = [_drop(entry) for entry in raw["effect"]]
    pending = _pending(raw)
    if pending:
        trimmed = {k: _drop(v) if k in ("approve", "execute") else v for k, v in pending.items()}
        raw["confirmation"] = {**raw["confirmation"], "pending": trimmed}
    return raw


def _drop(step: Any) -> Any:
    return {k: v for k, v in step.items() if k != "server"} if isinstance(step, Mapping) else step
