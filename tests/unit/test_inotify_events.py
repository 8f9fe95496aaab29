"""A drain names every entry an event touched, once, decoded as os.fsdecode decodes it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from mcp_confirm_audit.oracle import inotify

# Names of every padded length around the 16-byte boundary, hostile characters, bytes that are not UTF-8.
NAMES = [
    b"a",
    b"x" * 15,
    b"y" * 16,
    b"z" * 17,
    b"n" * 255,
    "line\nbreak\r\n\u2028.txt".encode(),
    b"\xff\xfe-not-utf8",
    "caf\u00e9 \u2029".encode(),
]


def test_every_named_entry_and_the_directory_itself_come_out_once(tmp_path: Path) -> None:
    watched = tmp_path / "watched"
    (watched / "sub").mkdir(parents=True)
    watcher = inotify.Watcher()
    try:
        watcher.watch("root", str(watched))
        watcher.watch("root/sub", str(watched / "sub"))
        for name in NAMES:
            path = os.path.join(os.fsencode(watched), name)
            with open(path, "wb") as handle:  # created, modified, closed: three events, one name
                handle.write(b"x")
        os.unlink(os.path.join(os.fsencode(watched), NAMES[0]))
        os.chmod(watched / "sub", 0o700)  # an event on the directory itself, with no name
        (watched / "sub" / "inner").write_text("x")
        changes = watcher.drain()
        assert not changes.overflowed
        assert changes.entries == {
            *(f"root/{os.fsdecode(name)}" for name in NAMES),
            "root/sub",
            "root/sub/inner",
        }
        shutil.rmtree(watched / "sub")  # its watch goes (an IN_IGNORED): later events there are not named
        changes = watcher.drain()
        assert changes.entries == {"root/sub", "root/sub/inner"}
        assert "root/sub" not in watcher._names.values()
        assert watcher.drain().entries == set()
    finally:
        watcher.close()


def test_a_drain_reads_on_while_a_read_came_back_full(tmp_path: Path) -> None:
    # More events than one read hands over (three 64-byte events a file, 64 KiB a read): the read
    # that came back full is followed by another, and every name comes out.
    watcher = inotify.Watcher()
    try:
        watcher.watch("root", str(tmp_path))
        names = [f"{n:04d}-{'x' * 40}" for n in range(600)]
        for name in names:
            (tmp_path / name).write_text("x")
        assert watcher.drain().entries == {f"root/{name}" for name in names}
        assert watcher.drain().entries == set()
    finally:
        watcher.close()
