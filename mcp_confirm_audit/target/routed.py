"""Several servers on one root, reached as one connection: each call goes to its tool's server.

A profile's `servers:` (profile/servers.py) starts every server on the same root,
each a process of its own with its own reaper, and `Routed` sends a tools/call to
the server a step named for its tool, else the first server that lists it, else the
first server. Everything above the driver (setup, the action, probes, flows) keeps
calling one connection; the exchange it records names the server's connection.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio

from ..channels.base import Place
from ..channels.http import base_url
from ..models import Exchange, Phase
from ..profile.loader import Profile
from ..profile.servers import Servers
from .driver import Connection, ToolInfo, connect
from .zygote import Zygote


class Routed(Connection):
    """One connection per server, as one: `call` picks the server of the tool it calls."""

    def __init__(self, name: str, parts: Mapping[str, Connection], servers: Servers) -> None:
        self.parts = dict(parts)
        self.servers = servers
        # Which server lists each tool, learned from tools/list: a tool no step names goes there.
        self._owner: dict[str, str] = {}
        first = self.parts[servers.names[0]]
        super().__init__(
            name,
            first.client,
            first.call_timeout,
            first.stderr_path,
            first.endpoint,
            refusals=first.refusals,
            secrets=first.secrets,
            back=first.back,
            answer_deadline=first.answer_deadline,
            answer_after=first.answer_after,
        )
        self.terminal = first.terminal

    def places(self) -> dict[str, Place]:
        """Each server's base URL, output and terminal, for a person's step that names it (`server: post`)."""
        return {
            name: Place(base_url(part.endpoint), part.stderr_path, part.terminal)
            for name, part in self.parts.items()
        }

    @property
    def alive(self) -> bool:
        return all(part.alive for part in self.parts.values())

    @alive.setter
    def alive(self, value: bool) -> None:
        if not value:  # a connection given up on: every server's, so all are replaced together
            for part in self.parts.values():
                part.alive = False

    @property
    def round_trips(self) -> int:
        return sum(part.round_trips for part in self.parts.values())

    @round_trips.setter
    def round_trips(self, value: int) -> None:
        return  # each server's connection counts its own

    @property
    def listings(self) -> int:
        return sum(part.listings for part in self.parts.values())

    @listings.setter
    def listings(self, value: int) -> None:
        return

    @property
    def waited_on(self) -> float:
        return sum(part.waited_on for part in self.parts.values())

    @waited_on.setter
    def waited_on(self, value: float) -> None:
        return

    def server_of(self, tool: str) -> str:
        if tool in self.servers.routes:
            return self.servers.routes[tool]
        return self._owner.get(tool, self.servers.names[0])

    @property
    def answer_after(self) -> float:
        return self._answer_after

    @answer_after.setter
    def answer_after(self, seconds: float) -> None:
        """The person's pace (engine/pace), on every server's connection: each paces its own answers."""
        self._answer_after = seconds
        for part in self.parts.values():
            part.answer_after = seconds

    async def list_tools(self) -> list[ToolInfo]:
        """Every server's tools, the first server's first; a name two servers list is the first's."""
        tools: list[ToolInfo] = []
        for server in self.servers.names:
            for tool in await self.parts[server].list_tools():
                if tool.name not in self._owner:
                    self._owner[tool.name] = server
                    tools.append(tool)
        return tools

    async def call(
        self,
        phase: Phase,
        label: str,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        state: str | None = None,
        responses: Mapping[str, Any] | None = None,
        unanswered: bool = False,
    ) -> Exchange:
        part = self.parts[self.server_of(tool)]
        return await part.call(
            phase, label, tool, arguments, state=state, responses=responses, unanswered=unanswered
        )

    def asking_for(self, tool: str) -> bool:
        return self.parts[self.server_of(tool)].asking_for(tool)

    async def call_within(
        self, phase: Phase, label: str, tool: str, arguments: Mapping[str, Any], bound: float
    ) -> Exchange | None:
        return await self.parts[self.server_of(tool)].call_within(phase, label, tool, arguments, bound)

    async def call_raw(self, phase: Phase, label: str, params: Mapping[str, Any]) -> Exchange:
        return await self.parts[self.server_of(str(params.get("name")))].call_raw(phase, label, params)

    async def settle(self) -> None:
        """Every server's parked calls, settled at once (each server has a back channel of its own)."""
        async with anyio.create_task_group() as settling:
            for part in self.parts.values():
                settling.start_soon(part.settle)


@asynccontextmanager
async def connect_servers(
    profile: Profile,
    root: Path,
    logs: Path,
    name: str,
    *,
    ablate: bool = False,
    elicitation: str = "form+url",
    protocol: str | None = None,
    zygote: Zygote | None = None,
) -> AsyncIterator[Connection]:
    """`driver.connect`, for a profile with `servers:`: every server started on `root`, reached as one."""
    servers = profile.servers
    if servers is None or len(servers.commands) < 2:
        async with connect(
            profile,
            root,
            logs,
            name,
            ablate=ablate,
            elicitation=elicitation,
            protocol=protocol,
            zygote=zygote,
        ) as one:
            yield one
        return
    async with AsyncExitStack() as stack:
        parts = {}
        for index, (server, command) in enumerate(servers.commands):
            # The first server is the profile's command, with whatever the session filled in
            # ({sink}, a shorter lifetime); the others start as written.
            command = profile.command if index == 0 else command
            alone = replace(profile, command=command, servers=None)
            # `zygote:` forks each server that is a script on the zygote's interpreter over stdio.
            stdio = not (alone.is_url or alone.is_in_process or alone.serves_http or alone.tty)
            forks = zygote is not None and stdio and zygote.forks(alone.argv(root))
            opened = connect(
                alone,
                root,
                logs,
                f"{name}-{server}",
                ablate=ablate,
                elicitation=elicitation,
                protocol=protocol,
                zygote=zygote if forks else None,
            )
            parts[server] = await stack.enter_async_context(opened)
        yield Routed(name, parts, servers)
