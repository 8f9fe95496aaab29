"""Generated examples inside a technique: drawn from a seed, sent on the loop, shrunk on a failure.

Drawing costs microseconds (`generators`), so the examples are drawn when the
attack starts and sent one after another. The first that fails is made smaller
(`_shrink`): parts of it are cut away, largest first, and each smaller candidate
is sent; it is kept if the target still shows the same problem. Every candidate
is a round trip, none is sent twice, and the search stops at the time budget or
when the connection is gone, reporting the smallest failure found so far.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from ..catalogue.generation import MAX_SHRINK_TRIES
from ..catalogue.generators import Gen
from ..catalogue.prompt_checks import Finding

__all__ = ["MAX_SHRINK_TRIES", "Search", "search"]

# Quoted evidence in a finding: the names themselves, for a pair.
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


class _Stopped(Exception):
    """Out of time, or the connection is gone: no more examples."""


@dataclass
class Search:
    tried: int = 0
    stopped: str | None = None
    failing: tuple[Any, list[Finding]] | None = None


async def search(
    generator: Gen[Any],
    check: Callable[[Any], Coroutine[Any, Any, list[Finding]]],
    *,
    examples: int,
    seed_value: int,
    deadline: float,
    alive: Callable[[], bool],
    valid: Callable[[Any], bool] = lambda example: True,
    shrink_tries: int = MAX_SHRINK_TRIES,
) -> Search:
    """Up to `examples` generated examples through `check`; the failing one shrunk within `shrink_tries`."""
    outcome = Search()
    answers: dict[str, list[Finding]] = {}

    async def ask(example: Any) -> list[Finding]:
        key = repr(example)
        if key not in answers:
            if time.monotonic() > deadline:
                raise _Stopped("the time budget for generated names ran out")
            if not alive():
                raise _Stopped("the connection to the target was lost")
            outcome.tried += 1
            answers[key] = await check(example)
        return answers[key]

    try:
        for example in generator.examples(examples, seed_value):
            found = await ask(example)
            if found:
                outcome.failing = (example, found)
                break
    except _Stopped as stop:
        outcome.stopped = str(stop)
        return outcome
    if outcome.failing is not None:
        outcome.failing = await _shrink(*outcome.failing, ask, valid, outcome, shrink_tries)
    return outcome


async def _shrink(
    example: Any,
    found: list[Finding],
    ask: Callable[[Any], Coroutine[Any, Any, list[Finding]]],
    valid: Callable[[Any], bool],
    outcome: Search,
    tries: int,
) -> tuple[Any, list[Finding]]:
    """The smallest variant of `example` still failing as badly, within the budget."""
    same = _same_problem(example, found)
    parts, build = _parts(example)
    best: tuple[Any, list[Finding]] = (example, found)
    budget = outcome.tried + tries  # round trips; a candidate already asked about is free
    try:
        for index in range(len(parts)):
            chunk = max(1, len(parts[index]) // 2)
            while chunk >= 1:
                start = 0
                while start < len(parts[index]):
                    part = parts[index]
                    smaller = [*parts[:index], part[:start] + part[start + chunk :], *parts[index + 1 :]]
                    candidate = build(smaller)
                    if not valid(candidate):
                        start += chunk
                        continue
                    if outcome.tried == budget:
                        return best
                    result = await ask(candidate)
                    if same(result):
                        parts, best = smaller, (candidate, result)  # cut again at the same place
                    else:
                        start += chunk
                chunk //= 2
    except _Stopped as stop:
        outcome.stopped = str(stop)
    return best


def _same_problem(example: Any, found: list[Finding]) -> Callable[[list[Finding]], bool]:
    """Whether a smaller candidate's findings still show a problem `example` showed.

    A finding about one name quotes the part of it that causes the problem (the
    code point, the link, the forged line), so the same finding, word for word,
    keeps that part whole and cuts only what is around it. A finding about a pair
    quotes the two names, which shrinking changes: there the kind of finding,
    with its quotes left out, is what must stay.
    """
    if isinstance(example, str):
        return lambda result: not set(found).isdisjoint(result)
    kinds = {(verdict, _QUOTED.sub('""', message)) for verdict, message in found}
    return lambda result: any((verdict, _QUOTED.sub('""', message)) in kinds for verdict, message in result)


def _parts(example: Any) -> tuple[list[str], Callable[[Sequence[str]], Any]]:
    """The pieces shrinking cuts, and how to put them back together.

    A name is one piece. A pair of look-alike names is cut where it agrees
    (the same cut made in both) and where it differs (each side alone), so the
    two stay a pair that differs only where they did.
    """
    if isinstance(example, str):
        return [example], lambda parts: parts[0]
    first, second = example
    head = _shared_start(first, second)
    rest_first, rest_second = first[len(head) :], second[len(head) :]
    tail = _shared_start(rest_first[::-1], rest_second[::-1])[::-1]
    middle_first = rest_first[: len(rest_first) - len(tail)]
    middle_second = rest_second[: len(rest_second) - len(tail)]
    return [head, middle_first, middle_second, tail], lambda p: (p[0] + p[1] + p[3], p[0] + p[2] + p[3])


def _shared_start(first: str, second: str) -> str:
    size = 0
    while size < min(len(first), len(second)) and first[size] == second[size]:
        size += 1
    return first[:size]
