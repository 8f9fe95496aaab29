"""A race's effects are counted as actions, not as the rows one action touches."""

from __future__ import annotations

import anyio

from mcp_confirm_audit.oracle.counting import EffectCounter


def _count(changes: list[str]) -> int:
    async def since_start() -> list[str]:
        return changes

    return anyio.run(EffectCounter(since_start).counted)


def test_one_column_added_to_every_row_is_one_effect() -> None:
    # add_column once: a new cell in each existing row, and one new header.
    assert (
        _count(["root/jobs.csv", "file:jobs.csv[0].Stage", "file:jobs.csv[1].Stage", "tool:t.headers[0]"])
        == 1
    )


def test_two_new_rows_are_two_effects() -> None:
    assert _count(["root/ledger.csv", "file:ledger.csv[4]", "file:ledger.csv[5]", "sink[0]", "sink[1]"]) == 2


def test_a_new_row_beside_changed_ones_is_counted_with_them_once() -> None:
    assert _count(["tool:list.items[3]", "tool:list.items[0].seen", "tool:list.items[1].seen"]) == 2
