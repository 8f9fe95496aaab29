"""Generated names driven from an event loop: shrunk failures, the time budget, nothing sent twice."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import anyio

from mcp_confirm_audit.catalogue import generators as gen
from mcp_confirm_audit.catalogue.hostile_names import valid_example
from mcp_confirm_audit.catalogue.prompt_checks import Finding
from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.techniques._generated import MAX_SHRINK_TRIES, Search, search


def has_line_break(example: Any) -> bool:
    return "\n" in (example if isinstance(example, str) else "".join(example))


def run(
    generator: gen.Gen[Any],
    *,
    budget: float = 60,
    examples: int = 200,
    seed_value: int = 1,
    fails: Callable[[Any], bool] = has_line_break,
    findings: Callable[[Any], list[Finding]] | None = None,
    shrink_tries: int = MAX_SHRINK_TRIES,
) -> tuple[Search, list[Any]]:
    asked: list[Any] = []

    async def check(example: Any) -> list[Finding]:
        asked.append(example)  # runs on the loop, like a call to the target
        if findings is not None:
            return findings(example)
        return [(Verdict.VULNERABLE, "line break")] if fails(example) else []

    async def main() -> Search:
        return await search(
            generator,
            check,
            examples=examples,
            seed_value=seed_value,
            deadline=time.monotonic() + budget,
            alive=lambda: True,
            valid=valid_example,
            shrink_tries=shrink_tries,
        )

    return anyio.run(main), asked


def test_a_failing_example_is_shrunk_to_what_still_fails() -> None:
    outcome, _ = run(gen.text("ab\n", min_size=4, max_size=30))
    assert outcome.failing is not None
    assert outcome.failing[0] == "\n"  # the smallest name that still fails
    assert outcome.stopped is None


def test_a_clean_run_tries_the_budgeted_number_of_examples() -> None:
    outcome, asked = run(gen.text("ab", min_size=1, max_size=8), examples=40)
    assert outcome.failing is None
    assert outcome.tried == len(asked) == 40


def test_the_time_budget_stops_generation_without_a_finding() -> None:
    outcome, asked = run(gen.text("ab", min_size=1), budget=-1)
    assert outcome.failing is None
    assert outcome.tried == 0 == len(asked)
    assert outcome.stopped == "the time budget for generated names ran out"


def test_no_name_is_sent_twice_while_a_failure_is_shrunk() -> None:
    outcome, asked = run(gen.text("ab\n", min_size=1, max_size=40), seed_value=7)
    assert outcome.failing is not None
    assert outcome.failing[0] == "\n"
    assert len(asked) == len(set(asked)) == outcome.tried


def test_shrinking_stops_at_its_budget_with_the_smallest_failure_so_far() -> None:
    # Only the whole run of 100 different letters fails, so no cut into it does:
    # a round trip for every place a cut is tried.
    letters = "".join(map(chr, range(0xC0, 0xC0 + 100)))
    name = letters + "tail.txt"
    outcome, asked = run(gen.just(name), examples=1, fails=lambda name: letters in name)
    assert outcome.failing is not None
    assert letters in outcome.failing[0]
    assert len(outcome.failing[0]) < len(name)  # smaller than what failed first
    assert len(asked) == 1 + MAX_SHRINK_TRIES
    assert outcome.stopped is None  # generation itself was not cut short


def test_a_smaller_shrink_budget_is_kept_and_none_reports_the_failure_as_drawn() -> None:
    letters = "".join(map(chr, range(0xC0, 0xC0 + 100)))
    name = letters + "tail.txt"
    outcome, asked = run(gen.just(name), examples=1, fails=lambda name: letters in name, shrink_tries=5)
    assert len(asked) == 1 + 5  # the first cuts (halves) each lose a letter that fails: none is kept
    assert outcome.failing is not None
    assert letters in outcome.failing[0]
    outcome, asked = run(gen.just(name), examples=1, fails=lambda name: letters in name, shrink_tries=0)
    assert asked == [name]
    assert outcome.failing is not None
    assert outcome.failing[0] == name


def test_a_look_alike_pair_shrinks_to_two_valid_names_that_differ_where_they_did() -> None:
    outcome, _ = run(gen.just(("head\nmiddle.txt", "head middle.txt")), examples=1)
    assert outcome.failing is not None
    # The shared parts are cut in both; one letter stays, as "" is not a name.
    assert outcome.failing[0] == ("\nt", "t")


def test_the_same_seed_draws_the_same_names_and_another_seed_others() -> None:
    generator = gen.text("abcdef", min_size=1, max_size=8)
    assert generator.examples(30, 5) == generator.examples(30, 5)
    assert generator.examples(30, 5) != generator.examples(30, 6)
    assert len(set(generator.examples(30, 5))) == 30  # different names, not one name thirty times


def test_a_name_keeps_whole_the_part_its_finding_quotes_and_loses_the_rest() -> None:
    def links(name: Any) -> list[Finding]:
        return [
            (Verdict.WEAK, f'a link is clickable: "{m}"') for m in re.findall(r"\[[^]]*\]\([^)]*\)", name)
        ]

    name = "report-[Click here](https:evil.example)-final.pdf"
    outcome, _ = run(gen.just(name), examples=1, findings=links)
    assert outcome.failing is not None
    # Not "[]()": a smaller link is another finding, not the same one.
    assert outcome.failing[0] == "[Click here](https:evil.example)"


def test_a_pair_keeps_the_kind_of_its_finding_though_the_names_it_quotes_change() -> None:
    def alike(pair: Any) -> list[Finding]:
        first, second = pair
        same = first.replace("\n", " ") == second
        return [(Verdict.WEAK, f'two names render alike: "{first!r}" and "{second!r}"')] if same else []

    outcome, _ = run(gen.just(("0a\nb0.txt", "0a b0.txt")), examples=1, findings=alike)
    assert outcome.failing is not None
    assert outcome.failing[0] == ("\n", " ")


def test_a_seeds_examples_are_drawn_once_and_are_the_ones_a_fresh_generator_draws() -> None:
    draws: list[int] = []

    def draw(rng: Any) -> str:
        draws.append(1)
        return f"name-{rng.randint(0, 10**6)}.txt"

    kept, fresh = gen.Gen(draw), gen.Gen(draw)
    first = kept.examples(20, seed=7)
    drawn = len(draws)
    first.append("changed by a caller")
    again = kept.examples(20, seed=7)
    assert len(draws) == drawn  # nothing drawn again for the same seed
    assert again == fresh.examples(20, seed=7) == first[:-1]  # the same names, and a caller's list is its own
    assert kept.examples(20, seed=8) != again  # another seed, other names
