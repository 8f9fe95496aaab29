"""What an attack may ask for beyond the primary: the session's other connections, opened by key.

Another process, replicas, more clients of one process, a short-lived process, another principal,
a client that declares less, the other era. Each is a `ConnectionKey` under the prefix of the tool's
connections (ablated or not, its era); the session's world opens it (`World.open`), and what cannot
be had here raises `Unavailable` with the profile key that would give it.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..channels.human import Step
from ..errors import TargetError
from ..profile.headers import Header, as_dict, overlay
from ..target.driver import Connection
from ..techniques._era_control import EraControl
from ..techniques.base import Unavailable
from .connection_key import ConnectionKey, Declares, Era

if TYPE_CHECKING:
    from ..profile.loader import Profile
    from .world import World


@dataclass(frozen=True, slots=True)
class Identity:
    """Another identity's headers for a client of the primary's process, and where to fix them."""

    headers: tuple[Header, ...]
    hint: str


_NO_PRINCIPALS = (
    "needs a second identity the target authenticates: add it to the profile as principals: "
    "{mallory: {headers: {Authorization: 'Bearer ${MALLORY_TOKEN}'}}} (headers: being the victim's)"
)


class SessionPeers:
    """What an attack may ask for beyond the primary, opened in the session's world."""

    def __init__(
        self,
        world: World,
        profile: Profile,
        prefix: ConnectionKey,
        era_controls: MutableMapping[str, EraControl] | None = None,
        learned: MutableMapping[str, Any] | None = None,
    ) -> None:
        self._world = world
        self._profile = profile
        self._prefix = prefix
        # The session's, for this tool: each other era's honest flow is run once per audit.
        self.era_controls: MutableMapping[str, EraControl] = {} if era_controls is None else era_controls
        # The session's, for this tool in the world in place: what a family learned once for its other attacks.
        self.learned: MutableMapping[str, Any] = {} if learned is None else learned

    @property
    def shared_keys(self) -> bool:
        return bool(self._profile.shared_key_env)

    @property
    def redemptions(self) -> int:
        return self._profile.redemptions

    @property
    def principals(self) -> Mapping[str, tuple[Header, ...]]:
        return self._profile.principals

    @property
    def principal_steps(self) -> Mapping[str, tuple[Step, ...]]:
        return self._profile.principal_steps

    def _not_started_here(self, what: str) -> None:
        if self._profile.is_url:
            raise Unavailable(
                f"{what} needs processes the harness starts, and this target is a URL it only connects to; "
                "give the command instead (with {port} to serve it over HTTP)"
            )

    async def other(self) -> Connection:
        self._not_started_here("another process of the target")
        if self._profile.replicas >= 2:
            return (await self.replicas())[1]
        return await self._world.open(self._prefix.at("other"))

    async def replicas(self) -> list[Connection]:
        if self._profile.replicas < 2:
            raise Unavailable(
                "needs two or more replicas of the target on one root: pass --mcp-replicas 2 (or replicas: 2 "
                "in the profile), and shared_key_env in the profile if the replicas share request-state keys"
            )
        self._not_started_here("replicas")
        first = await self._world.open(self._prefix.at("primary"))
        rest = [
            await self._world.open(self._prefix.at(f"replica-{i}")) for i in range(1, self._profile.replicas)
        ]
        return [first, *rest]

    async def same_process(self, count: int) -> list[Connection]:
        primary = await self._world.open(self._prefix.at("primary"))
        if primary.endpoint is None:
            # Over stdio a process has one connection: concurrent requests on it.
            return [primary] * count
        peers = [
            await self._world.open(self._prefix.at(f"client-{i}"), attach_to=self._prefix.at("primary"))
            for i in range(1, count)
        ]
        return [primary, *peers]

    async def short_lived(self) -> tuple[Connection, float]:
        if not self._profile.ttl_flag:
            raise Unavailable(
                "the profile does not say how to shorten the target's confirmation lifetime: set ttl_flag "
                "(e.g. '--ttl-seconds {ttl}', or 'ttl_seconds={ttl}' for an in-process factory) and ttl: 1"
            )
        self._not_started_here("a short-lived process of the target")
        profile = self._world.started.with_ttl()
        return await self._world.open(self._prefix.at("short-lived"), profile=profile), self._profile.ttl

    async def principal(self, name: str | None = None, *, victims_claim: bool = False) -> Connection:
        principals = self._profile.principals
        if not principals:
            raise Unavailable(_NO_PRINCIPALS)
        if self._profile.transport != "http":
            raise Unavailable(
                f"another identity is a set of HTTP headers, and this target speaks {self._profile.transport}"
            )
        name = name or next(iter(principals))
        if name not in principals:
            raise Unavailable(f"the profile names no principal {name!r}; it names {', '.join(principals)}")
        headers, role = principals[name], f"principal-{name}"
        if victims_claim:
            claim = (self._profile.identity_header or "").lower()
            victims = next((h for h in self._profile.headers if claim and h.name.lower() == claim), None)
            if victims is None:
                raise Unavailable(
                    "needs the header the target takes as the caller's identity without verifying it: set "
                    "identity_header: NAME in the profile, with the victim's value in headers:"
                )
            headers, role = overlay(headers, [victims]), f"{role}-claiming-the-victim"
            if as_dict(headers) == as_dict(self._profile.headers):
                # The identity header is this target's whole credential: the other identity
                # claiming the victim would simply be the victim.
                raise Unavailable(
                    f"principal {name!r} with the victim's {victims.name} sends exactly the victim's headers, "
                    "so it is the victim: give it a credential of its own in principals:"
                )
        identity = Identity(headers, f"set principals: {name}: headers: in the profile")
        return await self._world.open(
            self._prefix.at(role), attach_to=self._prefix.at("primary"), identity=identity
        )

    async def declaring(self, elicitation: str) -> Connection:
        if elicitation not in ("none", "url"):
            raise ValueError(f"a client declares elicitation 'none' or 'url', not {elicitation!r}")
        declares: Declares = "none" if elicitation == "none" else "url"
        primary = await self._world.open(self._prefix.at("primary"))
        if primary.endpoint is not None:
            # HTTP and in-process: what a client declares is its own session's, so another client
            # of the same process declares it (as another era's client is, in `in_era`).
            client = self._prefix.at("client", declares=declares)
            return await self._world.open(client, attach_to=self._prefix.at("primary"))
        # Over stdio a process has one connection, whose client declared its capabilities: a process of its own.
        return await self._world.open(self._prefix.at("", declares=declares))

    async def in_era(self, era: str) -> Connection:
        if era not in ("legacy", "modern"):
            raise ValueError(f"an era is 'legacy' or 'modern', not {era!r}")
        primary = await self._world.open(self._prefix.at("primary"))
        if (era == "legacy") == primary.legacy:
            return primary
        other: Era = "legacy" if era == "legacy" else "modern"
        try:
            if primary.endpoint is not None:
                # HTTP and in-process: another client of the same process, in the other era.
                client = self._prefix.in_era(other).at("client")
                conn = await self._world.open(client, attach_to=self._prefix.at("primary"))
            else:
                # Over stdio the era is the process's connection's: another process on the same root.
                conn = await self._world.open(self._prefix.in_era(other).at("primary"))
        except TargetError as exc:
            raise Unavailable(f"the target cannot be reached in the {era} era: {exc}") from None
        if (era == "legacy") != conn.legacy:
            raise Unavailable(f"the target does not speak the {era} era (it negotiated {conn.era})")
        return conn
