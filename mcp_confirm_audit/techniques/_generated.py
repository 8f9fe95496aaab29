"""Hypothesis inside a technique: the engine in a worker thread, every example on the loop.

Techniques run on the session's event loop; Hypothesis is synchronous. The
engine runs in a thread (`anyio.to_thread`), and each example it draws is sent
to the one live connection through `anyio.from_thread.run`, so all examples
reach the same server process. A failing example is shrunk by Hypothesis; the
last failing call is the shrunk one (Hypothesis replays it last).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir, storage_directory
from hypothesis.errors import Flaky

from ..prompt_checks import Finding

_QUIET_CHECKS = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]


class _Found(Exception):
    """This example failed a check; Hypothesis shrinks it."""


class _Stopped(Exception):
    """Out of time, or the connection is gone: no more examples."""


@dataclass
class Search:
    tried: int = 0
    stopped: str | None = None
    failing: tuple[Any, list[Finding]] | None = None
    _failures: list[tuple[Any, list[Finding]]] = field(default_factory=list)


async def search(
    strategy: st.SearchStrategy[Any],
    check: Callable[[Any], Coroutine[Any, Any, list[Finding]]],
    *,
    examples: int,
    seed_value: int,
    deadline: float,
    alive: Callable[[], bool],
    storage: Path,
) -> Search:
    """Up to `examples` drawn examples through `check`; the shrunk failing one, if any.

    Hypothesis keeps caches (constants, character tables) in its home directory,
    `.hypothesis/` in the working directory by default; during the search it is
    `storage`, inside the sandbox, so the audit writes nothing anywhere else.
    """
    outcome = Search()

    @settings(
        max_examples=examples,
        database=None,  # nothing written outside the sandbox
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=_QUIET_CHECKS,
        verbosity=Verbosity.quiet,
        print_blob=False,
        report_multiple_bugs=False,
    )
    @seed(seed_value)
    @given(strategy)
    def probe(example: Any) -> None:
        if not outcome._failures:
            # Once something failed, shrinking must finish: stopping then would
            # make the failure look flaky to Hypothesis.
            if time.monotonic() > deadline:
                raise _Stopped("the time budget for generated names ran out")
            if not alive():
                raise _Stopped("the connection to the target was lost")
        outcome.tried += 1
        found: list[Finding] = anyio.from_thread.run(check, example)
        if found:
            outcome._failures.append((example, found))
            raise _Found

    def run() -> None:
        home = storage_directory(intent_to_write=False).home_directory
        set_hypothesis_home_dir(storage)
        try:
            probe()
        except _Found:
            pass
        except _Stopped as exc:
            outcome.stopped = str(exc)
        except Flaky:
            outcome.stopped = "the target answered the same name differently on a second ask"
        finally:
            set_hypothesis_home_dir(home)

    await anyio.to_thread.run_sync(run)
    if outcome._failures:
        outcome.failing = outcome._failures[-1]
    return outcome
