"""Hostile names drawn ahead of time: Hypothesis's first examples, without the target.

Hypothesis's engine costs about a millisecond an example, as much as a round
trip. The examples its search draws first for a seed do not depend on the
target (only a failure changes what it draws next), so they are drawn before
they are needed: the session starts `Drafts` in a background thread while the
target starts up, and prompt-forging sends the drawn names one after another
on the loop. Hypothesis itself runs again only when one fails, to shrink it
(`techniques._generated`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import anyio.to_thread
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory

# What decides a list of examples: the strategy, how many, the seed.
Draft = tuple[st.SearchStrategy[Any], int, int]

_QUIET_CHECKS = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]

# One engine at a time: Hypothesis's home directory is process-wide.
_ENGINE = threading.Lock()


def engine_settings(examples: int, phases: Sequence[Phase]) -> settings:
    # The same for drawing and for searching, so both draw the same examples first.
    return settings(
        max_examples=examples,
        database=None,  # nothing written outside the sandbox
        deadline=None,
        phases=phases,
        suppress_health_check=_QUIET_CHECKS,
        verbosity=Verbosity.quiet,
        print_blob=False,
        report_multiple_bugs=False,
    )


def in_home(storage: Path, run: Callable[[], None]) -> None:
    """Hypothesis's caches (constants, character tables) go to `storage`, inside the sandbox."""
    with _ENGINE:
        home = storage_directory(intent_to_write=False).home_directory
        set_hypothesis_home_dir(storage)
        try:
            run()
        finally:
            set_hypothesis_home_dir(home)


def draw(strategy: st.SearchStrategy[Any], examples: int, seed_value: int, storage: Path) -> list[Any]:
    """The examples Hypothesis's search draws first for this seed, drawn without sending any."""
    drawn: list[Any] = []

    @engine_settings(examples, [Phase.generate])
    @seed(seed_value)
    @given(strategy)
    def collect(example: Any) -> None:
        drawn.append(example)

    in_home(storage, collect)
    return drawn


class Drafts:
    """Examples drawn in a background thread, ahead of the attacks that send them.

    Keyed by strategy, count and seed, which decide the examples, so one
    `Drafts` may serve any number of sessions; `stop` ends what a session started.
    """

    def __init__(self) -> None:
        self._drafts: dict[tuple[int, int, int], Future[list[Any]]] = {}
        self._lock = threading.Lock()

    def start(self, jobs: Iterable[Draft], storage: Path) -> Callable[..., None]:
        """Draw for every job, in order, in a thread; returns what stops it.

        Stop it once the target is up: a thread drawing beside the attacks
        slows them more than it saves (each waits for the interpreter's lock
        after every system call), and what is left is drawn where it is needed.
        """
        with self._lock:
            # Only what no earlier session has drawn, or is drawing.
            pending = [(job, future) for job in jobs if (future := self._new_future(_key(*job))) is not None]
        stopped = threading.Event()

        def work() -> None:
            for (strategy, examples, seed_value), future in pending:
                if stopped.is_set() or not future.set_running_or_notify_cancel():
                    continue
                try:
                    future.set_result(draw(strategy, examples, seed_value, storage))
                except BaseException as exc:  # drawn again where it is needed
                    future.set_exception(exc)

        thread = threading.Thread(target=work, name="mcp-audit-draw", daemon=True)
        thread.start()

        def stop(*, wait: bool = True) -> None:
            # No other draw starts; with `wait`, before the sandbox goes, the one under way finishes.
            stopped.set()
            for _, future in pending:
                future.cancel()
            if wait:
                thread.join()

        return stop

    def _new_future(self, key: tuple[int, int, int]) -> Future[list[Any]] | None:
        known = self._drafts.get(key)
        usable = (
            known is not None and not known.cancelled() and (not known.done() or known.exception() is None)
        )
        if usable:
            return None  # drawn, or being drawn
        future: Future[list[Any]] = Future()
        self._drafts[key] = future
        return future

    async def take(
        self, strategy: st.SearchStrategy[Any], examples: int, seed_value: int, storage: Path
    ) -> list[Any]:
        """The drawn examples (waiting for them if under way), or drawn now."""
        with self._lock:
            future = self._drafts.get(_key(strategy, examples, seed_value))
        if future is not None and not future.cancelled():
            try:
                return await anyio.to_thread.run_sync(future.result)
            except Exception:  # cancelled meanwhile, or failed: drawn here
                pass
        return await anyio.to_thread.run_sync(lambda: draw(strategy, examples, seed_value, storage))


def _key(strategy: st.SearchStrategy[Any], examples: int, seed_value: int) -> tuple[int, int, int]:
    return (id(strategy), examples, seed_value)
