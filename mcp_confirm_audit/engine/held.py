"""A connection's context, held open by a task of its own on the session's event loop until closed.

What anyio's `BlockingPortal.wrap_async_context_manager` does for the world's connections, with the
closing done on the loop rather than from a thread: a session's connections close in one call to
the loop (the portal's wrapper takes two thread hops for each), and a client opened by an attack,
which runs on the loop already, is held with no thread at all (the wrapper can only be entered from
another thread). As with the wrapper, the context is entered and exited by the same task, which
lives as long as the connection: nothing an attack's task or its cancel scopes do reaches it.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager
from typing import Generic, TypeVar

import anyio

_T = TypeVar("_T")


class Held(Generic[_T]):
    """One async context held open: `start` it on the loop, read `entered`, then `close` it there."""

    def __init__(self, opener: AbstractAsyncContextManager[_T]) -> None:
        self._opener = opener
        # What the context gave (or why it could not be entered): waited for from any thread.
        self.entered: Future[_T] = Future()
        self._leave: anyio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        # The hold's whole life (made on the loop when it begins); `cancel` may come before it.
        self._scope: anyio.CancelScope | None = None
        self._given_up = False
        # What the exit raised: `close` raises it; a context never closed (the loop stopping) drops it,
        # as anyio's portal drops a failed call's (its task ends cleanly either way).
        self._exit_failed: Exception | None = None

    def start(self) -> None:
        """Begin holding: a task of its own on the running loop (call it there)."""
        self._task = asyncio.get_running_loop().create_task(self._hold())
        # A task cancelled before its first step (the loop stopping) never enters: nobody waits forever.
        self._task.add_done_callback(lambda _: self.entered.cancel())

    def cancel(self) -> None:
        """Whoever waited for `entered` gave up (Ctrl-C, SIGTERM): the hold is cancelled (call it on the loop).

        As the world's close cancels the loop's tasks: an entry (a handshake bounded only by the start
        timeout) ends the next time the loop runs, and a context entered meanwhile, which nobody will
        close, is left at once.
        """
        self._given_up = True
        if self._scope is not None:
            self._scope.cancel()

    async def _hold(self) -> None:
        self._leave = leave = anyio.Event()
        with anyio.CancelScope() as self._scope:
            if self._given_up:
                self._scope.cancel()
            try:
                value = await self._opener.__aenter__()
            except BaseException as exc:
                self.entered.set_exception(exc)
                if isinstance(exc, Exception):
                    return  # the opener's failure is the caller's to raise, from `entered`
                raise
            self.entered.set_result(value)
            try:
                await leave.wait()
            finally:
                # As the portal's wrapper exits it: with no exception, cancelled while held or not.
                try:
                    await self._opener.__aexit__(None, None, None)
                except Exception as exc:
                    self._exit_failed = exc

    async def close(self) -> None:
        """Exit the context (on the loop), and wait for its task; what the exit raised is raised here."""
        assert self._task is not None
        assert self._leave is not None
        self._leave.set()
        await self._task
        if self._exit_failed is not None:
            raise self._exit_failed
