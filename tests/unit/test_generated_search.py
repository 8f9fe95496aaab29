"""Hypothesis driven from an event loop: shrunk failures, the time budget, nothing left behind."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from hypothesis import strategies as st

from mcp_confirm_audit.drafts import Drafts, draw
from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.prompt_checks import Finding
from mcp_confirm_audit.techniques._generated import Search, search


def run(strategy: st.SearchStrategy[str], *, budget: float, storage: Path, examples: int = 200) -> Search:
    asked: list[str] = []

    async def check(name: str) -> list[Finding]:
        asked.append(name)  # runs on the loop, like a call to the target
        return [(Verdict.VULNERABLE, "line break")] if "\n" in name else []

    async def main() -> Search:
        return await search(
            strategy,
            check,
            examples=examples,
            seed_value=1,
            deadline=time.monotonic() + budget,
            alive=lambda: True,
            storage=storage,
        )

    return anyio.run(main)


def test_a_failing_example_is_shrunk_and_reported_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    outcome = run(st.text(alphabet="ab\n", min_size=1), budget=60, storage=tmp_path / "sandbox")
    assert outcome.failing is not None
    assert outcome.failing[0] == "\n"  # shrunk to the smallest name that still fails
    assert outcome.stopped is None
    # Hypothesis's caches went to the sandbox, not the working directory.
    assert not (tmp_path / ".hypothesis").exists()


def test_a_clean_run_tries_the_budgeted_number_of_examples(tmp_path: Path) -> None:
    outcome = run(st.text(alphabet="ab", min_size=1), budget=60, storage=tmp_path, examples=40)
    assert outcome.failing is None
    assert 1 <= outcome.tried <= 40


def test_the_time_budget_stops_generation_without_a_finding(tmp_path: Path) -> None:
    outcome = run(st.text(alphabet="ab", min_size=1), budget=-1, storage=tmp_path)
    assert outcome.failing is None
    assert outcome.tried == 0
    assert outcome.stopped == "the time budget for generated names ran out"


def test_no_name_is_sent_twice_while_a_failure_is_shrunk(tmp_path: Path) -> None:
    asked: list[str] = []

    async def check(name: str) -> list[Finding]:
        asked.append(name)
        return [(Verdict.VULNERABLE, "line break")] if "\n" in name else []

    async def main() -> Search:
        return await search(
            st.text(alphabet="ab\n", min_size=1),
            check,
            examples=200,
            seed_value=7,
            deadline=time.monotonic() + 60,
            alive=lambda: True,
            storage=tmp_path,
        )

    outcome = anyio.run(main)
    assert outcome.failing is not None
    assert outcome.failing[0] == "\n"
    # The drawn names before the failure are answered from memory when Hypothesis draws them again.
    assert len(asked) == len(set(asked)) == outcome.tried


def test_names_drawn_ahead_are_the_ones_the_search_would_draw(tmp_path: Path) -> None:
    strategy = st.text(alphabet="abc", min_size=1)
    drafts = Drafts()
    stop = drafts.start([(strategy, 30, 5)], tmp_path)
    try:
        ahead = anyio.run(drafts.take, strategy, 30, 5, tmp_path)
    finally:
        stop()
    assert ahead == draw(strategy, 30, 5, tmp_path)
    assert ahead  # something was drawn
    # Another session with the same seed reuses them; nothing is drawn again.
    drafts.start([(strategy, 30, 5)], tmp_path)()
    assert anyio.run(drafts.take, strategy, 30, 5, tmp_path) is ahead
