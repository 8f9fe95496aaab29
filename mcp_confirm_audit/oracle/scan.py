"""Snapshots of the sandbox, each built from the one before it.

The oracle snapshots the whole sandbox before and after every attack, and
the sandbox grows with every case, so a full walk (a directory listing per
directory and an lstat per entry) became the harness's largest cost. A
refresh does less and misses nothing that counts.

On Linux every directory in the tree is watched with inotify (`inotify`): an
entry is lstat'ed again only if an event since the previous snapshot named it;
an entry that is gone, or a directory that was replaced, takes what was known
below it along; a new directory is walked whole. The entries of the case under
attack (`pin`) are lstat'ed every time whatever the events say, so a change no
event reports (a write through a hard link kept outside the tree) is still
found where the attack aimed. When watching is not possible (not Linux, out of
watches, the event queue overflowed) a refresh falls back to looking at every
entry:

- every entry the previous snapshot holds is lstat'ed again, by name, so a
  removed or changed entry (the only thing that makes an effect) is found
  exactly as a full walk would find it;
- a directory is listed again only if it may have gained an entry: its
  mtime moved, or is too recent to trust (the kernel stamps directories from
  a coarse clock: a change in the same tick as the last look keeps the same
  mtime, so anything stamped since just before the previous snapshot began
  is listed again), or the harness marked it (it wrote there itself);
- a directory seen for the first time is walked whole.

A refresh from events also says which names it looked at again (added, replaced
or dropped): the snapshots it makes share that history, and `sandbox.diff`
between two of them looks at those names only, not at every entry of a tree that
holds every case of the run. A full look starts a new history.

What the fallback cannot see is an entry added to a directory whose mtime the
target then set back into the past. An added entry is never an effect, and
everything the harness itself creates is marked, so a victim or a canary is
always in the snapshot that precedes its attack.
"""

from __future__ import annotations

import errno
import operator
import os
import stat
import time
from collections.abc import Iterable, Mapping

from ..models import FileIdentity, TreeSnapshot
from .inotify import Watcher

_CLOCK_REALTIME_COARSE = 5  # Linux's clock for inode timestamps


def _timestamp_slack_ns() -> int:
    """How far a directory's mtime can lag the real time of the change."""
    try:
        tick = time.clock_getres(_CLOCK_REALTIME_COARSE)
    except OSError:  # not Linux: assume a coarse filesystem clock
        tick = 0.05
    return int(2 * tick * 1e9) + 1_000_000


# An entry's kind by the format bits of its mode (what stat.S_ISLNK, S_ISDIR and S_ISREG test).
_KINDS = {stat.S_IFLNK: "link", stat.S_IFDIR: "dir", stat.S_IFREG: "file"}
_FORMAT = 0o170000  # stat.S_IFMT's mask


def identity_from_stat(st: os.stat_result, path: str | os.PathLike[str]) -> FileIdentity:
    # Every entry a refresh looks at again passes here: the kind is read from the mode's format
    # bits in one lookup rather than by up to three S_IS* calls.
    kind = _KINDS.get(st.st_mode & _FORMAT, "other")
    target = os.readlink(path) if kind == "link" else None
    # A directory's size and mtime change whenever an entry in it does; only
    # its own identity (device, inode) says whether it was replaced.
    size = 0 if kind == "dir" else st.st_size
    mtime = 0 if kind == "dir" else st.st_mtime_ns
    return FileIdentity(kind, st.st_dev, st.st_ino, size, mtime, target)


def _unchanged(old: FileIdentity, st: os.stat_result) -> bool:
    if old.dev != st.st_dev or old.ino != st.st_ino:
        return False
    is_dir = (st.st_mode & _FORMAT) == stat.S_IFDIR  # stat.S_ISDIR, without a call for every entry
    if old.kind == "dir":
        return is_dir
    return old.size == st.st_size and old.mtime_ns == st.st_mtime_ns and not is_dir


# Parents before children: a name's depth. Called by `sorted` itself, with no Python frame per name.
_depth = operator.methodcaller("count", "/")


class TreeScanner:
    """Snapshots of watched folders, each entry named `label/relative/path`.

    `watched` maps a label to a folder; a label may itself contain slashes
    ("root/mcp-audit-x/cases" for cases inside a served root). With `notify`
    false, or where inotify is unavailable, every refresh looks at every entry.
    """

    def __init__(self, watched: Mapping[str, str | os.PathLike[str]], *, notify: bool = True) -> None:
        self.watched = {label: os.fspath(path) for label, path in watched.items()}
        self._tops = frozenset(self.watched)  # looked at again by every refresh
        self._slack = _timestamp_slack_ns()
        self._last: dict[str, FileIdentity] = {}
        self._paths: dict[str, str] = dict(self.watched)  # every known entry, on disk
        self._dir_mtimes: dict[str, int] = {}
        self._last_started = 0
        self._marked: set[str] = set()
        self._pinned: tuple[str, ...] = ()
        # Every known entry below a pinned directory: kept as entries come, so a refresh does not
        # look through the whole tree for them (the tree grows with every case).
        self._pinned_names: set[str] = set()
        # The names each refresh from events looked at again, shared by the snapshots it made
        # (`TreeSnapshot.history`); a full look starts another.
        self._history: list[frozenset[str]] = []
        self._watcher: Watcher | None = None
        if notify:
            try:
                self._watcher = Watcher()
            except (OSError, AttributeError):  # not Linux, or no inotify instance left
                self._watcher = None

    @property
    def notified(self) -> bool:
        """Whether refreshes are driven by inotify events (else every entry is looked at)."""
        return self._watcher is not None

    def mark(self, names: Iterable[str]) -> None:
        """Directories the harness wrote into: listed again next time, whatever their mtime."""
        self._marked.update(names)

    def pin(self, names: Iterable[str]) -> None:
        """Directories whose whole subtree is lstat'ed at every snapshot, events or not."""
        names = tuple(names)
        self._pinned = pinned = tuple([f"{name}/" for name in names])
        # An entry is only known with its directory: a directory not known yet (a new case) has none.
        known = not self._last.keys().isdisjoint(names)
        self._pinned_names = {name for name in self._last if name.startswith(pinned)} if known else set()

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None

    def snapshot(self) -> TreeSnapshot:
        changes = self._watcher.drain() if self._watcher is not None and self._last else None
        if changes is None or changes.overflowed:
            return self._look_at_everything()
        return self._from_events(changes.entries)

    def _from_events(self, changed: set[str]) -> TreeSnapshot:
        """The previous snapshot, with every entry an event named (or pinned) looked at again."""
        # Most refreshes find nothing changed: `entries` stays the previous snapshot's own mapping,
        # copied before its first change (the tree holds every case of the run).
        entries, paths = self._last, self._paths
        shared = True
        pinned = self._pinned
        names = changed | self._tops
        if pinned:
            names.update(self._pinned_names)
        to_list: list[str] = []
        # Every name whose entry this refresh adds, replaces or drops: the step `diff` looks at.
        touched: set[str] = set()
        # Parents before children: a gone or replaced directory takes its subtree with it.
        for name in sorted(names, key=_depth):
            parent, _, base = name.rpartition("/")
            if name not in self.watched:
                if parent not in entries or entries[parent].kind != "dir":
                    if name in entries:  # its directory is gone or became a link
                        if shared:
                            entries, shared = dict(entries), False
                        _drop(entries, name, touched=touched)
                    continue
                if name not in paths:
                    paths[name] = f"{paths[parent]}/{base}"
            path = paths[name]
            old = entries.get(name)
            try:
                st = os.lstat(path)
            except OSError:
                if old is not None:
                    if shared:
                        entries, shared = dict(entries), False
                    _drop(entries, name, touched=touched)
                continue
            if old is not None and _unchanged(old, st):
                continue
            if shared:
                entries, shared = dict(entries), False
            if old is not None and old.kind == "dir":
                _drop(entries, name, keep_self=True, touched=touched)  # replaced: nothing below it holds
            entries[name] = ident = identity_from_stat(st, path)
            touched.add(name)
            if pinned and name.startswith(pinned):
                self._pinned_names.add(name)
            if ident.kind == "dir":
                to_list.append(name)
        self._list(to_list, entries, paths, {}, touched)
        # Events do not keep directory mtimes: a fallback after this lists every directory.
        self._dir_mtimes, self._last_started = {}, 0
        self._marked.clear()
        if not touched:
            # Nothing added, replaced or dropped: the previous snapshot's entries and step, again.
            return TreeSnapshot(entries, self._history, len(self._history))
        if pinned:
            self._pinned_names = {name for name in self._pinned_names if name in entries}
        self._last = entries
        self._history.append(frozenset(touched))
        # Shared with `_last`, which is copied before any change.
        return TreeSnapshot(entries, self._history, len(self._history))

    def _look_at_everything(self) -> TreeSnapshot:
        started = time.time_ns()
        since = self._last_started - self._slack
        entries: dict[str, FileIdentity] = {}
        paths: dict[str, str] = {}
        dir_mtimes: dict[str, int] = {}
        to_list: list[str] = []
        lstat = os.lstat
        # Parents come before their children (watched folders first, then insertion order).
        known = [*self.watched, *(name for name in self._last if name not in self.watched)]
        for name in known:
            if name not in self.watched:
                parent = name.rpartition("/")[0]
                if parent not in entries or entries[parent].kind != "dir":
                    continue  # its directory is gone or became a link: never looked through
            path = self._paths[name]
            try:
                st = lstat(path)
            except OSError:  # gone (or a parent is no longer a directory)
                continue
            old = self._last.get(name)
            entries[name] = ident = (
                old if old is not None and _unchanged(old, st) else identity_from_stat(st, path)
            )
            paths[name] = path
            if ident.kind == "dir":
                dir_mtimes[name] = st.st_mtime_ns
                if (
                    ident is not old
                    or st.st_mtime_ns >= since
                    or self._dir_mtimes.get(name) != st.st_mtime_ns
                ):
                    to_list.append(name)
        to_list.extend(name for name in self._marked if name in entries and name not in to_list)
        self._list(to_list, entries, paths, dir_mtimes)
        pinned = self._pinned
        self._pinned_names = {name for name in entries if name.startswith(pinned)} if pinned else set()
        self._last, self._paths, self._dir_mtimes = entries, {**self.watched, **paths}, dir_mtimes
        self._last_started = started
        self._marked.clear()
        # Not refreshed from events: what changed is not known by name, so a new history starts here.
        self._history = []
        return TreeSnapshot(entries, self._history, 0)

    def _watch(self, name: str, path: str) -> None:
        if self._watcher is None:
            return
        try:
            self._watcher.watch(name, path)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return  # it went, or became a link: its parent's event says so
            # Out of watches (a hostile target can build a huge tree): from
            # now on every refresh looks at every entry.
            self.close()

    def _list(
        self,
        pending: list[str],
        entries: dict[str, FileIdentity],
        paths: dict[str, str],
        dir_mtimes: dict[str, int],
        touched: set[str] | None = None,
    ) -> None:
        # An explicit stack: a hostile target may build a deep tree. Links are
        # recorded, never followed.
        pinned = self._pinned
        while pending:
            name = pending.pop()
            # Watched before it is listed: a change after the listing is an event.
            self._watch(name, paths[name])
            try:
                listing = os.scandir(paths[name])
            except OSError:  # removed, or made unreadable, while we looked
                continue
            with listing:
                for entry in listing:
                    child = f"{name}/{entry.name}"
                    if child in entries:
                        continue  # known: refreshed above
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    entries[child] = ident = identity_from_stat(st, entry.path)
                    if touched is not None:
                        touched.add(child)
                    paths[child] = entry.path
                    if pinned and child.startswith(pinned):
                        self._pinned_names.add(child)
                    if ident.kind == "dir":
                        dir_mtimes[child] = st.st_mtime_ns
                        pending.append(child)


def _drop(
    entries: dict[str, FileIdentity], name: str, *, keep_self: bool = False, touched: set[str] | None = None
) -> None:
    """Forget `name` and everything below it (each name forgotten goes in `touched`)."""
    known = entries.get(name)
    if known is not None and known.kind == "dir":  # only a directory has anything below it
        below = f"{name}/"
        for gone in [entry for entry in entries if entry.startswith(below)]:
            del entries[gone]
            if touched is not None:
                touched.add(gone)
    if not keep_self and entries.pop(name, None) is not None and touched is not None:
        touched.add(name)
