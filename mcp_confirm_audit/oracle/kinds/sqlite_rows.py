"""The `sqlite` effect: rows a read-only query returns from a database under the root.

    effect:
      - sqlite: {path: app.db, query: "select * from payments order by id"}

The database is opened read-only (`mode=ro`), waits a while for a writer's
lock instead of failing at once, and may only read: one SELECT (or WITH ...
SELECT) is accepted when the profile is read, and an authorizer refuses
anything else when the query runs, so no query can write, attach another
file or change a setting. Write the query with an ORDER BY: rows in no order
may come back in another one.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

import anyio.to_thread

from ..beneath import Unread, open_beneath, relative_path
from ..effects import ProbeEnv, ProbeSpec, probe_kind

BUSY_TIMEOUT = 2.0  # seconds to wait for the target's write lock
MAX_ROWS = 100_000


@dataclass(frozen=True, slots=True)
class SqliteProbe:
    name: str
    path: PurePosixPath
    query: str

    async def observe(self, env: ProbeEnv) -> Any:
        return await anyio.to_thread.run_sync(self.read, env.root, abandon_on_cancel=True)

    def read(self, root: Path) -> Any:
        before = _identity(root, self.path)
        if not isinstance(before, tuple):
            return before
        uri = f"file:{quote(str(root / self.path))}?mode=ro"
        if before[2] and open_beneath(root, self.path.with_name(f"{self.path.name}-wal")) is None:
            # A WAL database with no -wal file holds everything in its main file; opened
            # read-only the ordinary way, SQLite would create -wal and -shm files in the
            # root, and the sandbox would see the harness's own files as an effect.
            uri += "&immutable=1"
        db = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
        try:
            db.set_authorizer(_only_reads)
            try:
                cursor = db.execute(self.query)
            except sqlite3.DatabaseError as exc:
                if "not authorized" in str(exc):
                    raise ValueError(f"effect {self.name}: the query may only read ({exc})") from None
                raise
            names = _column_names(cursor.description or ())
            rows = [dict(zip(names, map(_value, row), strict=True)) for row in cursor.fetchmany(MAX_ROWS)]
            if cursor.fetchone() is not None:
                rows.append({"_truncated": f"more than {MAX_ROWS} rows: only the first are compared"})
        finally:
            db.close()
        # The path was checked before the open; a link swapped in meanwhile would
        # have led the open elsewhere, and then what it read is not the database.
        after = _identity(root, self.path)
        if not isinstance(after, tuple) or after[:2] != before[:2]:
            return {"unread": "replaced while it was read", "at": str(self.path)}
        return rows


@probe_kind("sqlite")
def sqlite_probe(spec: ProbeSpec) -> SqliteProbe:
    path, query = spec.options.get("path"), spec.options.get("query")
    if not isinstance(path, str) or not isinstance(query, str):
        raise ValueError(f"effect {spec.name}: 'path' and 'query' must both be strings")
    return SqliteProbe(spec.name, relative_path(path), read_only_query(query))


def _identity(root: Path, path: PurePosixPath) -> tuple[int, int, bool] | dict[str, str] | None:
    """The file's device and inode and whether it is a WAL database; or why it cannot be read."""
    opened = open_beneath(root, path)
    if opened is None or isinstance(opened, Unread):
        return opened.as_value() if opened else None
    try:
        st = os.fstat(opened)
        header = os.pread(opened, 20, 0)
        return st.st_dev, st.st_ino, header[:16] == b"SQLite format 3\0" and header[18:20] == b"\2\2"
    finally:
        os.close(opened)


_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    getattr(sqlite3, "SQLITE_RECURSIVE", 33),
}


def _only_reads(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED else sqlite3.SQLITE_DENY


def _column_names(description: Any) -> list[str]:
    names: list[str] = []
    for column in description:
        name, n = str(column[0]), 2
        while name in names:  # "select a.id, b.id": both kept
            name, n = f"{column[0]}:{n}", n + 1
        names.append(name)
    return names


def _value(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"sha256": hashlib.sha256(value).hexdigest(), "size": len(value)}
    return value


# Quoted text, quoted names and comments: what a statement's words are not.
_NOT_CODE = re.compile(
    r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|`[^`]*`|\[[^\]]*\]|--[^\n]*|/\*.*?(?:\*/|$)", re.S
)
_WRITES = re.compile(r"\b(insert|update|delete|replace\s+into)\b", re.I)


def read_only_query(query: str) -> str:
    """`query` when it is one SELECT or WITH ... SELECT statement; a ValueError saying why not."""
    code = _NOT_CODE.sub(" ", query).strip()
    if code.endswith(";"):
        code = code[:-1].rstrip()
    if not code:
        raise ValueError("the query is empty; write one SELECT, e.g. 'select * from payments order by id'")
    if ";" in code:
        raise ValueError("the query has more than one statement; write exactly one SELECT")
    word = re.match(r"[A-Za-z]*", code)
    first = (word.group(0) if word else "").lower() or code[:1]
    if first not in ("select", "with"):
        raise ValueError(f"the query starts with {first.upper()}; only a SELECT (or WITH ... SELECT) may run")
    if first == "with" and (write := _WRITES.search(code)):
        raise ValueError(f"the query writes ({write.group(1).upper()}); only a SELECT may run")
    return query
