"""Seeded generators of examples: a few combinators over `random.Random`.

The hostile names prompt-forging sends are drawn here rather than by a
property-testing engine: an engine's bookkeeping costs about a millisecond an
example, more than the in-process round trip that sends it, and a generated
name should cost no more than its round trip. A generator is a function of a
seeded `Random`, so a seed gives the same examples on any machine and any
transport; a failure is made smaller in `techniques._generated`, one round
trip per candidate.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
U = TypeVar("U")

# A filter that rejects this many draws in a row is a bug in the generator, not bad luck.
_MAX_REJECTIONS = 1000
# Seeds whose examples a generator keeps (`Gen.examples`); past that it forgets them all.
_KEPT_SEEDS = 64


class Gen(Generic[T_co]):
    """Draws one example from a `Random`."""

    __slots__ = ("_draw", "_drawn")

    def __init__(self, draw: Callable[[random.Random], T_co]) -> None:
        self._draw = draw
        # (count, seed) -> the examples drawn for it: a pure function of the seed, drawn once.
        self._drawn: dict[tuple[int, int], tuple[T_co, ...]] = {}

    def draw(self, rng: random.Random) -> T_co:
        return self._draw(rng)

    def map(self, function: Callable[[T_co], U]) -> Gen[U]:
        return Gen(lambda rng: function(self.draw(rng)))

    def filter(self, keep: Callable[[T_co], bool]) -> Gen[T_co]:
        def draw(rng: random.Random) -> T_co:
            for _ in range(_MAX_REJECTIONS):
                example = self.draw(rng)
                if keep(example):
                    return example
            raise RuntimeError("a generator's filter rejected every draw")

        return Gen(draw)

    def examples(self, count: int, seed: int) -> list[T_co]:
        """`count` different examples (fewer only if there are not that many), the same for a seed.

        Drawn once for a seed: a process that runs many audits with the same seeds (a
        test suite, `bench`, `CI=true`) does not draw the same names again for each.
        """
        key = (count, seed)
        kept = self._drawn.get(key)
        if kept is None:
            if len(self._drawn) >= _KEPT_SEEDS:
                self._drawn.clear()
            kept = self._drawn[key] = tuple(self._drawn_anew(count, seed))
        return list(kept)

    def _drawn_anew(self, count: int, seed: int) -> list[T_co]:
        rng = random.Random(seed)
        drawn: dict[str, T_co] = {}
        for _ in range(count * 10):
            example = self.draw(rng)
            drawn.setdefault(repr(example), example)
            if len(drawn) == count:
                break
        return list(drawn.values())


def just(value: T) -> Gen[T]:
    return Gen(lambda rng: value)


def sampled_from(values: Sequence[T]) -> Gen[T]:
    choices = list(values)
    return Gen(lambda rng: rng.choice(choices))


def integers(low: int, high: int) -> Gen[int]:
    return Gen(lambda rng: rng.randint(low, high))


def one_of(*generators: Gen[Any]) -> Gen[Any]:
    return Gen(lambda rng: rng.choice(generators).draw(rng))


def text(alphabet: Sequence[str] | Gen[str], min_size: int = 0, max_size: int = 8) -> Gen[str]:
    """Characters from `alphabet` (a sequence of strings, or a generator), a length in range."""
    if isinstance(alphabet, Gen):
        piece = alphabet.draw
        return Gen(lambda rng: "".join(piece(rng) for _ in range(rng.randint(min_size, max_size))))
    letters = list(alphabet)
    return Gen(lambda rng: "".join(rng.choices(letters, k=rng.randint(min_size, max_size))))


def lists(element: Gen[T], min_size: int = 0, max_size: int = 3) -> Gen[list[T]]:
    return Gen(lambda rng: [element.draw(rng) for _ in range(rng.randint(min_size, max_size))])


def builds(function: Callable[..., T], *parts: Gen[Any]) -> Gen[T]:
    return Gen(lambda rng: function(*(part.draw(rng) for part in parts)))
