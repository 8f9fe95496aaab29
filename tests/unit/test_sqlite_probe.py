"""The `sqlite` effect: rows of a real database, read only, and never a query that writes."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from probe_env import FakeEnv, observe

from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.oracle.effect_spec import parse_effect
from mcp_confirm_audit.oracle.effects import ProbeSpec, build_probe, changes

QUERY = "select id, payee, amount from payments order by id"


def payments_db(root: Path) -> sqlite3.Connection:
    db = sqlite3.connect(root / "app.db", isolation_level=None)
    db.execute("pragma journal_mode=wal")
    db.execute("create table payments (id integer primary key, payee text, amount integer, receipt blob)")
    db.execute("insert into payments (payee, amount) values ('acme', 500)")
    return db


def spec(query: str = QUERY, path: str = "app.db") -> ProbeSpec:
    return parse_effect({"sqlite": {"path": path, "query": query}}, "pay.yaml")


def test_a_payment_the_action_inserted_is_seen_as_a_new_row(tmp_path: Path) -> None:
    writer = payments_db(tmp_path)  # the target keeps its connection open, in WAL mode
    env = FakeEnv(tmp_path)
    before = observe(spec(), env)
    writer.execute("insert into payments (payee, amount) values ('mallory', 9999)")
    after = observe(spec(), env)
    writer.close()
    assert before == [{"id": 1, "payee": "acme", "amount": 500}]
    assert changes("sqlite:app.db", before, after) == ["sqlite:app.db[1]"]


def test_a_changed_amount_is_named_as_its_cell(tmp_path: Path) -> None:
    writer = payments_db(tmp_path)
    env = FakeEnv(tmp_path)
    before = observe(spec(), env)
    writer.execute("update payments set amount = 501 where id = 1")
    writer.close()
    assert changes("sqlite:app.db", before, observe(spec(), env)) == ["sqlite:app.db[0].amount"]


@pytest.mark.parametrize("writer_open", [True, False], ids=["target-connected", "target-closed"])
@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_the_probe_leaves_no_file_of_its_own_in_the_root(
    tmp_path: Path, journal: str, writer_open: bool
) -> None:
    # Read-only SQLite creates -wal and -shm files next to a WAL database whose
    # writer has gone: the sandbox would count the harness's own files as an effect.
    writer = payments_db(tmp_path)
    writer.execute(f"pragma journal_mode={journal}")
    writer.execute("insert into payments (payee, amount) values ('acme', 1)")
    if not writer_open:
        writer.close()
    listing = sorted(os.listdir(tmp_path))
    rows = observe(spec(), FakeEnv(tmp_path))
    assert [r["amount"] for r in rows] == [500, 1]
    assert sorted(os.listdir(tmp_path)) == listing
    if writer_open:
        writer.execute("insert into payments (payee, amount) values ('acme', 2)")
        assert [r["amount"] for r in observe(spec(), FakeEnv(tmp_path))] == [500, 1, 2]
        writer.close()


def test_a_blob_is_a_digest(tmp_path: Path) -> None:
    writer = payments_db(tmp_path)
    writer.execute("update payments set receipt = x'00ff'")
    writer.close()
    rows = observe(spec("select receipt from payments"), FakeEnv(tmp_path))
    assert rows[0]["receipt"]["size"] == 2


def test_a_missing_database_is_none(tmp_path: Path) -> None:
    assert observe(spec(), FakeEnv(tmp_path)) is None


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("delete from payments", "starts with DELETE"),
        ("insert into payments (payee) values ('x')", "starts with INSERT"),
        ("select 1; drop table payments", "has more than one statement"),
        ("attach database '/etc/x.db' as x", "starts with ATTACH"),
        ("pragma journal_mode=delete", "starts with PRAGMA"),
        ("with doomed as (select id from payments) delete from payments", r"writes \(DELETE\)"),
        ("  -- nothing\n", "is empty"),
    ],
)
def test_a_query_that_is_not_one_select_is_refused_when_the_profile_is_read(query: str, why: str) -> None:
    with pytest.raises(UsageError, match=rf"^profile pay.yaml: effect .*: the query {why}"):
        spec(query)


def test_a_select_with_semicolons_in_its_text_and_a_trailing_one_is_accepted(tmp_path: Path) -> None:
    payments_db(tmp_path).close()
    rows = observe(spec("select payee || ';' as p from payments -- a; comment\n;"), FakeEnv(tmp_path))
    assert rows == [{"p": "acme;"}]


def test_a_write_that_slips_past_the_profile_check_is_refused_by_the_database(tmp_path: Path) -> None:
    # The authorizer is the second wall: a learned spec is not read from a profile.
    payments_db(tmp_path).close()
    probe = build_probe(ProbeSpec("sqlite", "sqlite:app.db", {"path": "app.db", "query": QUERY}))
    object.__setattr__(probe, "query", "with x as (select 1) update payments set amount = 0")
    with pytest.raises(ValueError, match="may only read"):
        observe(probe, FakeEnv(tmp_path))
    db = sqlite3.connect(tmp_path / "app.db")
    assert db.execute("select amount from payments").fetchall() == [(500,)]
    db.close()


def test_a_database_behind_a_symlink_out_of_the_root_is_not_opened(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    payments_db(outside).close()
    os.symlink(outside / "app.db", root / "app.db")
    value = observe(spec(), FakeEnv(root))
    assert value == {"unread": "symlink", "at": "app.db", "link": str(outside / "app.db")}


def test_a_database_path_outside_the_root_is_refused() -> None:
    with pytest.raises(UsageError, match="leaves the root"):
        spec(path="../app.db")
