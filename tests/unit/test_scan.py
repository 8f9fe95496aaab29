"""A refreshed snapshot sees exactly what a full walk sees, whatever happened in between."""

from __future__ import annotations

import errno
import os
import shutil
import socket
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_confirm_audit.models import TreeSnapshot
from mcp_confirm_audit.oracle import inotify
from mcp_confirm_audit.oracle.sandbox import WATCHED_DIRS, Sandbox, diff, snapshot
from mcp_confirm_audit.oracle.scan import TreeScanner, _unchanged, identity_from_stat

PATHS = (
    "root/a",
    "root/a/b",
    "root/a/b/c",
    "root/d",
    "root/d/c",
    "outside/e",
    "root-evil/f",
    "root-evil/f/g",
    "root",
)
OPERATIONS = (
    "write",
    "append",
    "remove",
    "mkdir",
    "symlink",
    "rename",
    "move-away",
    "touch",
    "snapshot",
    "age-then-snapshot",
)


def _apply(base: Path, operation: str, first: str, second: str, size: int) -> None:
    path, other = base / first, base / second
    try:
        if operation == "write":
            path.write_text("x" * size)
        elif operation == "append":
            with path.open("a") as handle:
                handle.write("y")
        elif operation == "remove":
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        elif operation == "mkdir":
            path.mkdir()
        elif operation == "symlink":
            path.symlink_to(other)
        elif operation == "rename":
            os.replace(path, other)
        elif operation == "move-away":  # out of the watched tree: no event for what it holds
            away = base / "logs" / f"away-{len(os.listdir(base / 'logs'))}"
            os.replace(path, away)
        elif operation == "touch":  # a new mtime, nothing else: no listing changes
            os.utime(path, ns=(size, size), follow_symlinks=False)
    except OSError:
        pass  # the operation does not apply to the tree as it is: that is fine too


def _age(base: Path) -> None:
    for directory, _, files in os.walk(base):
        for path in [directory, *(os.path.join(directory, name) for name in files)]:
            stamp = os.lstat(path).st_mtime_ns - 60 * 10**9
            os.utime(path, ns=(stamp, stamp), follow_symlinks=False)


# Up to 25 operations on the sandbox's files, snapshots among them.
CHANGES = st.lists(
    st.tuples(
        st.sampled_from(OPERATIONS),
        st.sampled_from(PATHS),
        st.sampled_from(PATHS),
        st.integers(min_value=0, max_value=3),
    ),
    max_size=25,
)


@pytest.mark.parametrize("notify", [True, False], ids=["inotify", "every-entry"])
@settings(max_examples=150, deadline=None)
@given(CHANGES)
def test_a_refreshed_snapshot_equals_a_full_walk_after_any_changes(
    notify: bool, steps: list[tuple[str, str, str, int]]
) -> None:
    box = Sandbox()
    scanner = TreeScanner({top: box.base / top for top in WATCHED_DIRS}, notify=notify)
    try:
        # On Linux (CI) the events path is what is tested, never silently the fallback.
        assert scanner.notified is notify
        scanner.snapshot()
        for operation, first, second, size in steps:
            if operation == "age-then-snapshot":
                # Directories stamped a minute ago are trusted, and not listed,
                # until they change again: the path a long audit takes.
                _age(box.base)
            if operation in ("snapshot", "age-then-snapshot"):
                assert scanner.snapshot().entries == snapshot(box.base).entries
            else:
                _apply(box.base, operation, first, second, size)
        assert scanner.snapshot().entries == snapshot(box.base).entries
        assert scanner.notified is notify  # never fell back on the way
    finally:
        scanner.close()
        box.remove()


@settings(max_examples=100, deadline=None)
@given(CHANGES)
def test_a_diff_that_looks_only_at_the_names_refreshes_touched_finds_what_a_full_diff_finds(
    steps: list[tuple[str, str, str, int]],
) -> None:
    # Refreshed snapshots name what each refresh looked at again; between any two of them, a diff
    # over those names alone must find every entry a diff over the whole tree finds.
    box = Sandbox()
    scanner = TreeScanner({top: box.base / top for top in WATCHED_DIRS})
    try:
        taken = [scanner.snapshot()]
        for operation, first, second, size in steps:
            if operation == "age-then-snapshot":
                _age(box.base)
            if operation in ("snapshot", "age-then-snapshot"):
                taken.append(scanner.snapshot())
            else:
                _apply(box.base, operation, first, second, size)
        taken.append(scanner.snapshot())
        assert all(later.history is taken[0].history for later in taken)  # never fell back on the way
        for index, earlier in enumerate(taken):
            for later in taken[index:]:
                whole = diff(TreeSnapshot(earlier.entries), TreeSnapshot(later.entries))
                assert diff(earlier, later) == whole
    finally:
        scanner.close()
        box.remove()


def test_what_only_a_listing_or_a_dropped_directory_shows_is_in_the_names_a_refresh_touched(
    tmp_path: Path,
) -> None:
    (tmp_path / "root" / "kept" / "inside").mkdir(parents=True)
    (tmp_path / "root" / "kept" / "inside" / "canary.txt").write_text("canary")
    scanner = TreeScanner({"root": tmp_path / "root"})
    before = scanner.snapshot()
    # Made before its directory is watched: no event names it, only the listing finds it.
    (tmp_path / "root" / "new" / "deeper").mkdir(parents=True)
    # Moved out of the tree whole: no event names what it held.
    os.replace(tmp_path / "root" / "kept", tmp_path / "moved-away")
    after = scanner.snapshot()
    assert after.history is before.history
    effect = diff(before, after)
    assert effect == diff(TreeSnapshot(before.entries), TreeSnapshot(after.entries))
    assert effect.added == ("root/new", "root/new/deeper")
    assert effect.removed == ("root/kept", "root/kept/inside", "root/kept/inside/canary.txt")
    scanner.close()


def test_a_refresh_that_finds_nothing_changed_shares_the_entries_and_a_later_change_leaves_them_be(
    tmp_path: Path,
) -> None:
    (tmp_path / "root" / "a").mkdir(parents=True)
    (tmp_path / "root" / "a" / "canary.txt").write_text("canary")
    scanner = TreeScanner({"root": tmp_path / "root"})
    scanner.pin(["root/a"])
    first = scanner.snapshot()
    again = scanner.snapshot()
    assert again.entries is first.entries
    assert again.generation == first.generation
    kept = dict(first.entries)
    (tmp_path / "root" / "a" / "canary.txt").write_text("rewritten")
    (tmp_path / "root" / "b").mkdir()
    later = scanner.snapshot()
    assert later.entries is not first.entries
    assert first.entries == kept  # a snapshot taken is never changed by a later refresh
    assert diff(again, later) == diff(TreeSnapshot(kept), TreeSnapshot(later.entries))
    assert diff(again, later).changed == ("root/a/canary.txt",)
    scanner.close()


def test_snapshots_of_two_histories_are_diffed_whole(tmp_path: Path) -> None:
    (tmp_path / "root" / "a").mkdir(parents=True)
    (tmp_path / "root" / "a" / "canary.txt").write_text("canary")
    scanner = TreeScanner({"root": tmp_path / "root"})
    before = scanner.snapshot()
    (tmp_path / "root" / "a" / "canary.txt").unlink()
    # Another scanner's snapshot shares no history with `before`: every entry is compared.
    after = TreeScanner({"root": tmp_path / "root"}, notify=False).snapshot()
    assert after.history is not before.history
    assert diff(before, after).removed == ("root/a/canary.txt",)
    scanner.close()


def test_a_victim_removed_after_the_sandbox_snapshot_is_an_effect_on_an_old_large_tree() -> None:
    box = Sandbox()
    try:
        for n in range(30):
            box.new_case(f"earlier-{n}")
        box.snapshot()
        case = box.new_case("now")
        before = box.snapshot()
        assert case.rel(case.victim) in before.entries
        case.victim.unlink()
        (box.root / "001-earlier-0" / "canary.txt").write_text("rewritten in place, same directory mtime")
        effect = diff(before, box.snapshot())
        assert effect.removed == (case.rel(case.victim),)
        assert effect.changed == ("root/001-earlier-0/canary.txt",)
    finally:
        box.remove()


def test_a_directory_replaced_by_a_link_is_not_looked_through(tmp_path: Path) -> None:
    (tmp_path / "root" / "a").mkdir(parents=True)
    (tmp_path / "root" / "a" / "victim.txt").write_text("victim")
    (tmp_path / "root" / "elsewhere").mkdir()
    (tmp_path / "root" / "elsewhere" / "victim.txt").write_text("a file of the same name")
    scanner = TreeScanner({"root": tmp_path / "root"})
    before = scanner.snapshot()
    shutil.rmtree(tmp_path / "root" / "a")
    (tmp_path / "root" / "a").symlink_to(tmp_path / "root" / "elsewhere")
    after = scanner.snapshot()
    assert after.entries == snapshot_of(tmp_path)
    assert diff(before, after).removed == ("root/a/victim.txt",)


def snapshot_of(base: Path) -> dict[str, object]:
    return dict(TreeScanner({"root": base / "root"}).snapshot().entries)


def test_a_refreshed_snapshot_of_cases_inside_a_served_root_names_them_as_the_root_sees_them(
    tmp_path: Path,
) -> None:
    served = tmp_path / "served"
    (served / "mcp-audit-x" / "cases").mkdir(parents=True)
    box = Sandbox(served_root=served)
    try:
        case = box.new_case("x")
        before = box.snapshot()
        case.victim.unlink()
        after = box.snapshot()
        assert after.entries == snapshot(box.base, box._watched).entries
        assert diff(before, after).removed == (case.rel(case.victim),)
    finally:
        box.remove()


def test_the_case_under_attack_is_looked_at_even_when_no_event_says_it_changed(tmp_path: Path) -> None:
    # A write through a hard link kept outside the tree is reported to the link's
    # directory only: the pinned case is lstat'ed all the same.
    (tmp_path / "root" / "case").mkdir(parents=True)
    victim = tmp_path / "root" / "case" / "victim.txt"
    victim.write_text("victim")
    os.link(victim, tmp_path / "kept-elsewhere")
    scanner = TreeScanner({"root": tmp_path / "root"})
    unpinned = TreeScanner({"root": tmp_path / "root"})
    scanner.pin(["root/case"])
    before, unpinned_before = scanner.snapshot(), unpinned.snapshot()
    with (tmp_path / "kept-elsewhere").open("a") as handle:
        handle.write(" rewritten")
    assert scanner.notified
    assert diff(before, scanner.snapshot()).changed == ("root/case/victim.txt",)
    # What the pin is for: no event in the tree, so a scanner without it misses the write.
    assert diff(unpinned_before, unpinned.snapshot()).changed == ()
    scanner.close()
    unpinned.close()


def test_lost_events_make_the_next_refresh_look_at_every_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "root" / "a").mkdir(parents=True)
    (tmp_path / "root" / "a" / "canary.txt").write_text("canary")
    scanner = TreeScanner({"root": tmp_path / "root"})
    before = scanner.snapshot()
    (tmp_path / "root" / "a" / "canary.txt").unlink()
    # As if the kernel's queue had overflowed: no directory is named, the loss is.
    monkeypatch.setattr(inotify.Watcher, "drain", lambda self: inotify.Changes(overflowed=True))
    assert diff(before, scanner.snapshot()).removed == ("root/a/canary.txt",)
    scanner.close()


def test_out_of_watches_the_scanner_looks_at_every_entry_from_then_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "root").mkdir()
    scanner = TreeScanner({"root": tmp_path / "root"})
    scanner.snapshot()

    def no_more(self: inotify.Watcher, name: str, path: str) -> None:
        raise OSError(28, "No space left on device")  # ENOSPC: max_user_watches reached

    monkeypatch.setattr(inotify.Watcher, "watch", no_more)
    (tmp_path / "root" / "deep").mkdir()
    (tmp_path / "root" / "deep" / "canary.txt").write_text("canary")
    before = scanner.snapshot()
    assert not scanner.notified
    (tmp_path / "root" / "deep" / "canary.txt").write_text("rewritten, and longer")
    assert diff(before, scanner.snapshot()).changed == ("root/deep/canary.txt",)


def test_a_directory_moved_away_and_replaced_by_a_file_takes_what_was_below_it(tmp_path: Path) -> None:
    # Moving a directory raises no event for what is inside it: the scanner must
    # forget that subtree itself, whatever replaced the directory.
    (tmp_path / "root" / "a" / "b").mkdir(parents=True)
    (tmp_path / "root" / "a" / "b" / "victim.txt").write_text("victim")
    (tmp_path / "elsewhere").mkdir()
    scanner = TreeScanner({"root": tmp_path / "root"})
    before = scanner.snapshot()
    os.rename(tmp_path / "root" / "a", tmp_path / "elsewhere" / "a")
    (tmp_path / "root" / "a").write_text("a file where the directory was")
    after = scanner.snapshot()
    assert scanner.notified
    assert after.entries == snapshot_of(tmp_path)
    assert diff(before, after).removed == ("root/a/b", "root/a/b/victim.txt")
    scanner.close()


def test_a_directory_gone_before_it_could_be_watched_does_not_end_watching(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "root").mkdir()
    scanner = TreeScanner({"root": tmp_path / "root"})
    before = scanner.snapshot()
    real_watch = inotify.Watcher.watch

    def gone_first(self: inotify.Watcher, name: str, path: str) -> None:
        if name == "root/brief":
            shutil.rmtree(path)  # removed by the target between the event and the watch
            raise OSError(errno.ENOENT, "No such file or directory")
        real_watch(self, name, path)

    monkeypatch.setattr(inotify.Watcher, "watch", gone_first)
    (tmp_path / "root" / "brief").mkdir()
    scanner.snapshot()
    assert scanner.notified
    assert diff(before, scanner.snapshot()).added == ()
    scanner.close()


def test_an_entry_kind_is_what_the_stat_module_says_it_is(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to("file")
    (tmp_path / "to-dir").symlink_to("dir")
    os.mkfifo(tmp_path / "fifo")
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind(str(tmp_path / "socket"))
        for entry in os.scandir(tmp_path):
            st = entry.stat(follow_symlinks=False)
            said = (
                "link"
                if stat.S_ISLNK(st.st_mode)
                else "dir"
                if stat.S_ISDIR(st.st_mode)
                else "file"
                if stat.S_ISREG(st.st_mode)
                else "other"
            )
            identity = identity_from_stat(st, entry.path)
            assert identity.kind == said, entry.name
            assert identity.link_target == (os.readlink(entry.path) if said == "link" else None)
            assert _unchanged(identity, st)
            assert _unchanged(identity, os.lstat(tmp_path / "dir")) == (entry.name == "dir")
