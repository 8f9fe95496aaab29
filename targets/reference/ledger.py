"""Single-use ledger of outstanding confirmations.

The SDK seals and expires `requestState` but never consumes it, so the same approval
verifies again and again within its TTL. A nonce issued at round 1 and spent at round 2
with an atomic compare-and-delete closes that: of two redemptions, exactly one wins.
Backends: in-memory (one process), SQLite or Redis (shared by replicas).
"""

from __future__ import annotations

import fcntl
import sqlite3
import time
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.to_thread
from race_gate import RaceGate

if TYPE_CHECKING:
    from collections.abc import Callable


class Backend(Protocol):
    async def issue(self, nonce: str, ttl: float) -> None: ...

    async def spend(self, nonce: str) -> bool:
        """Atomically remove `nonce`; True only for the one caller that removed it unexpired."""
        ...

    async def outstanding(self, nonce: str) -> bool: ...

    async def discard(self, nonce: str) -> None: ...

    async def aclose(self) -> None:
        """Release connections; the backend stays usable (it reconnects on demand)."""
        ...


class MemoryBackend:
    """One event loop, no await between lookup and removal: atomic by construction."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._expires: dict[str, float] = {}
        self._clock = clock

    async def issue(self, nonce: str, ttl: float) -> None:
        now = self._clock()
        self._expires = {n: e for n, e in self._expires.items() if e > now}  # bounded by live nonces
        self._expires[nonce] = now + ttl

    async def spend(self, nonce: str) -> bool:
        expires = self._expires.pop(nonce, None)
        return expires is not None and expires > self._clock()

    async def outstanding(self, nonce: str) -> bool:
        return self._expires.get(nonce, 0.0) > self._clock()

    async def discard(self, nonce: str) -> None:
        self._expires.pop(nonce, None)

    async def aclose(self) -> None:
        pass


class ProcessLocalBackend:
    """Remembers only what this process spent; any nonce it has not seen passes.

    This is what a per-process ledger must look like if round 2 may land on another
    replica than round 1: it cannot know the nonces the other replicas issued.
    """

    def __init__(self, ttl: float, clock: Callable[[], float] = time.time) -> None:
        self._spent: dict[str, float] = {}
        self._ttl = ttl
        self._clock = clock

    async def issue(self, nonce: str, ttl: float) -> None:
        now = self._clock()
        self._spent = {n: e for n, e in self._spent.items() if e > now}

    async def spend(self, nonce: str) -> bool:
        if nonce in self._spent:
            return False
        self._spent[nonce] = self._clock() + self._ttl
        return True

    async def outstanding(self, nonce: str) -> bool:
        return nonce not in self._spent

    async def discard(self, nonce: str) -> None:
        self._spent[nonce] = self._clock() + self._ttl

    async def aclose(self) -> None:
        pass


class SqliteBackend:
    """A connection per call (sqlite3 connections are not for sharing across threads)."""

    def __init__(self, path: str) -> None:
        self._path = path
        # Replicas started together all set the database up: switching to WAL can answer
        # "database is locked" at once, without waiting out busy_timeout, while another
        # connection does the same. One setup at a time, by a lock on a file beside it.
        with open(f"{path}.setup-lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._execute("PRAGMA journal_mode=WAL")
            self._execute(
                "CREATE TABLE IF NOT EXISTS confirmations (nonce TEXT PRIMARY KEY, expires REAL NOT NULL)"
            )

    def _execute(self, sql: str, *args: str | float) -> int:
        """Rows changed by a write, or rows returned by a query."""
        db = sqlite3.connect(self._path, timeout=10.0, isolation_level=None)  # autocommit
        try:
            db.execute("PRAGMA busy_timeout=10000")
            cur = db.execute(sql, args)
            return cur.rowcount if cur.description is None else len(cur.fetchall())
        finally:
            db.close()

    async def _call(self, sql: str, *args: str | float) -> int:
        return await anyio.to_thread.run_sync(lambda: self._execute(sql, *args))

    async def issue(self, nonce: str, ttl: float) -> None:
        now = time.time()
        await self._call("DELETE FROM confirmations WHERE expires <= ?", now)
        await self._call("INSERT INTO confirmations VALUES (?, ?)", nonce, now + ttl)

    async def spend(self, nonce: str) -> bool:
        # One statement: the database serialises writers, so only one DELETE sees the row.
        return (
            await self._call("DELETE FROM confirmations WHERE nonce = ? AND expires > ?", nonce, time.time())
            == 1
        )

    async def outstanding(self, nonce: str) -> bool:
        sql = "SELECT 1 FROM confirmations WHERE nonce = ? AND expires > ?"
        return await self._call(sql, nonce, time.time()) == 1

    async def discard(self, nonce: str) -> None:
        await self._call("DELETE FROM confirmations WHERE nonce = ?", nonce)

    async def aclose(self) -> None:
        pass


class RedisBackend:
    """Redis expires the key itself, and DEL returns 1 to exactly one caller."""

    def __init__(self, url: str) -> None:
        try:
            import redis.asyncio  # lazily: only servers started with a redis ledger need it
        except ImportError:
            raise ValueError("a redis ledger needs the `redis` package (pip install redis)") from None
        self._redis: Any = redis.asyncio.Redis.from_url(url)

    @staticmethod
    def _key(nonce: str) -> str:
        return f"mcp-confirm-reference:nonce:{nonce}"

    async def issue(self, nonce: str, ttl: float) -> None:
        await self._redis.set(self._key(nonce), b"1", px=max(1, int(ttl * 1000)), nx=True)

    async def spend(self, nonce: str) -> bool:
        return int(await self._redis.delete(self._key(nonce))) == 1

    async def outstanding(self, nonce: str) -> bool:
        return int(await self._redis.exists(self._key(nonce))) == 1

    async def discard(self, nonce: str) -> None:
        await self._redis.delete(self._key(nonce))

    async def aclose(self) -> None:
        await self._redis.connection_pool.disconnect()


def open_backend(spec: str) -> Backend:
    """`memory`, `sqlite:PATH` or `redis://HOST:PORT/DB`."""
    if spec == "memory":
        return MemoryBackend()
    if spec.startswith("sqlite:") and len(spec) > len("sqlite:"):
        return SqliteBackend(spec[len("sqlite:") :])
    if spec.startswith("redis://"):
        return RedisBackend(spec)
    raise ValueError(f"unknown ledger {spec!r}: use memory, sqlite:PATH or redis://HOST:PORT/DB")


class Ledger:
    """The policy over a backend; the flaws weaken how a nonce is spent."""

    def __init__(
        self,
        backend: Backend,
        ttl: float,
        *,
        never_spend: bool = False,
        racy: bool = False,
        race: RaceGate | None = None,
        late_first_question: float = 0.0,
    ) -> None:
        self._backend = backend
        self._ttl = ttl
        self._never_spend = never_spend
        self.race = (race or RaceGate()) if racy else None
        self._late_first_question = late_first_question

    async def issue(self, nonce: str) -> None:
        if not self._never_spend:
            await self._backend.issue(nonce, self._ttl)
        if self._late_first_question:
            # Not a flaw: a loaded machine, where the question reaches its client after its lifetime began.
            delay, self._late_first_question = self._late_first_question, 0.0
            await anyio.sleep(delay)

    async def spend(self, nonce: str) -> bool:
        if self._never_spend:
            # FLAW no-ledger: nothing is recorded, so only the SDK's seal and TTL remain.
            return True
        if self.race is not None:
            # FLAW check-then-delete-ledger: the gap between the check and the delete lets concurrent
            # redemptions all pass. The gap is held open by the race gate (every one that passed waits
            # there for the others), not by a pause, so the race is the same at any load.
            if not await self._backend.outstanding(nonce):
                return False
            await anyio.to_thread.run_sync(self.race.passed, nonce)
            await self._backend.discard(nonce)
            return True
        return await self._backend.spend(nonce)
