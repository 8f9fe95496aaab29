"""Hypothesis inside a technique: examples drawn ahead, sent on the loop, shrunk only on a failure.

Techniques run on the session's event loop; Hypothesis is synchronous, and its
engine costs about a millisecond an example, as much as a round trip. So the
examples are drawn first, without the target (`draw`, which the session
starts in a background thread while the target starts up, see `Drafts`), and
the loop sends them one after another. Only if one fails does Hypothesis run
its search for real, in a worker thread, each example it asks about sent to
the same live connection through `anyio.from_thread.run`: with the same seed it
draws the same examples first, whose answers are already known (memoized, not
sent again), then shrinks the failure. The last failing call is the shrunk one
(Hypothesis replays it last).
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
from hypothesis import Phase, given, seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from ..drafts import Drafts, engine_settings, in_home
from ..prompt_checks import Finding


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
    drafts: Drafts | None = None,
) -> Search:
    """Up to `examples` drawn examples through `check`; the shrunk failing one, if any."""
    outcome = Search()
    drafted = await (drafts or Drafts()).take(strategy, examples, seed_value, storage)
    answers: dict[str, list[Finding]] = {}
    for example in drafted:
        if time.monotonic() > deadline:
            outcome.stopped = "the time budget for generated names ran out"
            return outcome
        if not alive():
            outcome.stopped = "the connection to the target was lost"
            return outcome
        outcome.tried += 1
        answers[repr(example)] = found = await check(example)
        if found:
            outcome._failures.append((example, found))
            break
    if not outcome._failures:
        return outcome

    @engine_settings(examples, [Phase.generate, Phase.shrink])
    @seed(seed_value)
    @given(strategy)
    def probe(example: Any) -> None:
        # Shrinking must finish once something failed: stopping then would make
        # the failure look flaky to Hypothesis. Examples already sent are not sent again.
        key = repr(example)
        if key not in answers:
            outcome.tried += 1
            answers[key] = anyio.from_thread.run(check, example)
        if answers[key]:
            outcome._failures.append((example, answers[key]))
            raise _Found

    def run() -> None:
        try:
            probe()
        except _Found:
            pass
        except Flaky:
            outcome.stopped = "the target answered the same name differently on a second ask"

    await anyio.to_thread.run_sync(lambda: in_home(storage, run))
    outcome.failing = outcome._failures[-1]
    return outcome
