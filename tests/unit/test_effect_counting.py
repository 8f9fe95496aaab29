"""A race's effects are counted as actions, not as the rows one action touches."""

from __future__ import annotations

import anyio

from mcp_confirm_audit.oracle.counting import EffectCounter, count_items
from mcp_confirm_audit.oracle.effects import changes_by_kind


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


def _count_in(unit: int, changes: list[str]) -> int:
    async def since_start() -> list[str]:
        return changes

    return anyio.run(EffectCounter(since_start, unit).counted)


# One terraform apply rewrites six lines of a state file read as text: one effect, not six.
ONE_APPLY = [f"file:infra/terraform.tfstate[{i}]" for i in (3, 4, 5, 6, 10, 16)] + ["root/site/legacy.txt"]


def test_a_race_is_counted_in_units_of_what_one_honest_effect_changed() -> None:
    assert _count(ONE_APPLY) == 6
    assert _count_in(6, ONE_APPLY) == 1


def test_two_effects_of_two_items_each_are_two_in_that_unit() -> None:
    # A wake sends three packets: two wakes are six rows, two effects.
    assert _count_in(3, [f"file:wol.log[{i}]" for i in range(6)]) == 2
    # Anything more than one effect's worth is more than one effect.
    assert _count_in(2, ["file:arm.pose[0]", "file:arm.pose[5]", "file:arm.pose[6]"]) == 2


def test_a_ledger_that_had_no_rows_counts_each_row_the_redemptions_appended() -> None:
    # The greenhouse's changeset with token-reuse: eight redemptions of one token each appended a label to
    # a store that had no `labels` yet. Named as one list added, the race counted one effect and judged
    # TOKREUSE-003 refused; each row is one.
    appended = {"labels": [{"bed": "north", "label": "tomatoes"}] * 3}
    found = changes_by_kind("file:greenhouse.json", {}, appended)
    assert found == [(f"file:greenhouse.json.labels[{i}]", "added") for i in range(3)]
    assert count_items([path for path, _ in found]) == 3
    # A list that appears empty is still one change, named where it is.
    assert changes_by_kind("f", {}, {"labels": []}) == [("f.labels", "added")]
