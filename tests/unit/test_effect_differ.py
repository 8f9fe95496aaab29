"""The differ and the bookkeeping filter: what counts as a change, and what `ignore:` may hide."""

from __future__ import annotations

import pytest

from mcp_confirm_audit.oracle.effects import changes, generalised, is_ignored


def test_one_changed_cell_is_named_as_that_cell() -> None:
    before = [{"id": "1", "status": "open"}, {"id": "2", "status": "open"}]
    after = [{"id": "1", "status": "open"}, {"id": "2", "status": "done"}]
    assert changes("file:jobs.csv", before, after) == ["file:jobs.csv[1].status"]


def test_an_added_row_and_an_added_key_are_named() -> None:
    assert changes("tool:list", [1], [1, 2]) == ["tool:list[1]"]
    assert changes("tool:get", {"a": 1}, {"a": 1, "b": None}) == ["tool:get.b"]


def test_a_value_that_is_not_a_number_equals_itself() -> None:
    # A robot that reports NaN for an idle joint has not moved it: NaN != NaN
    # must not turn every comparison into an effect (a false `vulnerable`).
    nan = float("nan")
    assert changes("tool:get_robot_state", {"joint": nan}, {"joint": nan}) == []
    assert changes("tool:get_robot_state", {"joint": nan}, {"joint": 1.0}) == ["tool:get_robot_state.joint"]


def test_true_and_one_are_different_values() -> None:
    # In Python True == 1, but a flag that became 1 (or a count that became true) did change.
    assert changes("tool:get", {"armed": 1}, {"armed": True}) == ["tool:get.armed"]
    assert changes("tool:get", {"n": 0}, {"n": False}) == ["tool:get.n"]
    assert changes("tool:get", {"n": 1}, {"n": 1.0}) == []


def test_a_result_nested_deeper_than_the_stack_is_still_compared() -> None:
    # A target is not trusted to behave: a very deep result must not crash the judge.
    deep_a: list[object] = []
    deep_b: list[object] = []
    a, b = deep_a, deep_b
    for _ in range(5000):
        a.append([])
        b.append([])
        a, b = a[0], b[0]  # type: ignore[assignment]
    b.append(1)
    found = changes("tool:deep", deep_a, deep_b)
    assert len(found) == 1
    assert found[0].startswith("tool:deep[0][0]")


def test_generalised_wildcards_positions() -> None:
    assert generalised("file:jobs.csv[12].status") == "file:jobs.csv[*].status"


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        ("tool:list_jobs[3].updated_at", "updated_at"),  # a bare field name, wherever it is
        ("tool:get_state.updated_at", "updated_at"),
        ("tool:get_state.meta.updated_at.seconds", "updated_at"),  # and below it
        ("file:jobs.csv[2].updated_at", "updated_at"),
        ("tool:list_jobs[3].updated_at", "tool:list_jobs[*].updated_at"),  # a probe path with [*]
        ("tool:list_jobs[3].updated_at", "tool:list_jobs[3].updated_at"),
        ("tool:get_state.clock.tick", "tool:get_state.clock"),  # everything below a probe path
        ("tool:list_jobs[3].meta.etag", "tool:list_jobs[*].meta.*"),  # a glob over a probe path
        ("sink[3].body.amount", "sink"),  # a whole probe
        ("root/audit.jsonl", "audit.jsonl"),  # a root path
        ("root/audit.jsonl", "root/audit.jsonl"),
        ("root/logs/2026/12/01.log", "logs"),  # a folder and all below it
        ("root/logs/server.log", "logs/*"),  # a glob
        ("root/001-case/cache.tmp", "*.tmp"),
        # One SQLite database, whichever of its files a write landed in (toolpermit's audit log).
        ("root/.toolpermit/audit.db", "root/.toolpermit/audit.db-wal"),
        ("root/.toolpermit/audit.db-shm", "root/.toolpermit/audit.db-wal"),
        ("root/state.sqlite-wal", "state.sqlite"),
        ("root/state.sqlite-journal", "state.sqlite"),
    ],
)
def test_bookkeeping_that_is_ignored(path: str, pattern: str) -> None:
    assert is_ignored(path, [pattern])


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        # A glob of root paths never reaches outside the root: a write there is the attack.
        ("outside/001-case/canary.txt", "*.txt"),
        ("root-evil/001-case/canary.txt", "*"),
        ("outside/audit.jsonl", "audit.jsonl"),
        # A bare field name is a field, not a file's extension or a prefix of a name.
        ("root/001-case/victim.txt", "txt"),
        ("file:ledger.json[0].amount", "json"),
        ("file:notes.txt[3]", "txt"),
        ("root/audit.jsonl", "root/audit"),
        ("file:ledger.json.total", "file:ledger"),
        ("tool:list_jobs[3].status", "updated_at"),
        ("tool:list_jobs_archive[0].id", "tool:list_jobs"),
        # Only SQLite's own companions: another file named like a log is another file.
        ("root/audit.db", "audit.db-backup"),
        ("root/audit.db-old", "audit.db"),
        ("outside/audit.db", "audit.db-wal"),
    ],
)
def test_what_a_pattern_does_not_hide(path: str, pattern: str) -> None:
    assert not is_ignored(path, [pattern])


def test_changes_say_how_and_places_name_the_case_and_wildcard_positions() -> None:
    from mcp_confirm_audit.oracle.effects import changes_by_kind, disk_places, probe_places

    before = {"rows": [{"id": "a", "n": 1}, {"id": "b", "n": 2}]}
    after = {"rows": [{"id": "a", "n": 3}, {"id": "c", "n": 4}]}
    assert changes_by_kind("t", before, after) == [
        ("t.rows[0].n", "changed"),
        ("t.rows[1]", "removed"),
        ("t.rows[1]", "added"),
    ]
    # Seen on another connection, at another position: the same place.
    assert probe_places({"tool:l@other-0": before}, {"tool:l@other-0": after}, ["n"]) == [
        "added tool:l.rows[*]",
        "removed tool:l.rows[*]",
    ]
    assert disk_places(["root/009-x/victim.txt"], ["root/ledger.json"], "root/009-x") == [
        "removed case/victim.txt",
        "rewritten root/ledger.json",
    ]


def test_a_log_learned_as_bookkeeping_on_disk_is_bookkeeping_in_every_row_of_it() -> None:
    # Seen on a real server: its audit log was named "ignored as bookkeeping", and its new
    # rows, read by the file probe, still counted as the effect.
    assert is_ignored("file:audit.jsonl[4]", ["root/audit.jsonl"])
    assert is_ignored("file:logs/audit.csv[2].status", ["logs"])
    assert not is_ignored("file:jobs.csv[2].status", ["root/audit.jsonl"])
