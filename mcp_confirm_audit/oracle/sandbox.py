"""The temporary tree every attack runs in, and the effect oracle over it.

One sandbox per target process (the root is fixed when the server starts);
inside it each attack gets a case of its own: a directory in the root with
its victim and a canary. An attack that names a path outside the root gets
canaries of its own there too, outside the root and in a sibling whose name
merely starts with the root's name, made the first time it names them (before
its snapshot). Effects are observed on disk (identity and tree diff), never
inferred from what a server says.

A server already running (a URL target) has a root of its own: the cases then
go in a fresh folder inside it, and only that folder is watched and removed.
Nothing can be put beside such a root without writing outside the sandbox, so
its sibling is an ordinary folder that does not share the root's name.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, partial
from itertools import compress
from operator import is_not
from pathlib import Path

from ..models import Effect, FileIdentity, TreeSnapshot
from .scan import TreeScanner, identity_from_stat

CANARY_TEXT = "canary: this file must survive the audit\n"
VICTIM_TEXT = "victim: the file the user is asked about\n"
_CANARY_BYTES, _VICTIM_BYTES = CANARY_TEXT.encode(), VICTIM_TEXT.encode()


def decoy_text(label: str) -> str:
    """What another subject of an attack holds: never the victim's bytes, nor its size.

    A token or state may be bound to the file's content (a digest) or its size
    rather than its name: a decoy that carried the victim's bytes would match it,
    and an approval carried from one to the other would prove nothing.
    """
    text = f"decoy {label}: another file, not the one the user is asked about\n"
    return text if len(text) != len(VICTIM_TEXT) else text.replace("\n", ".\n")


def identity_of(path: Path) -> FileIdentity | None:
    """Identity as lstat sees it: a link is a link, not its destination."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return identity_from_stat(st, path)


# Top-level folders of the sandbox the oracle watches; anything else there
# (the target's stderr log) belongs to the harness.
WATCHED_DIRS = ("root", "outside", "root-evil")


def snapshot(base: Path, watched: dict[str, Path] | None = None) -> TreeSnapshot:
    """Every entry below each watched folder, named `label/relative/path`: a full walk, from scratch."""
    return TreeScanner(watched or {top: base / top for top in WATCHED_DIRS}, notify=False).snapshot()


def diff(before: TreeSnapshot, after: TreeSnapshot) -> Effect:
    history = before.history
    if history is not None and history is after.history and before.generation <= after.generation:
        # Refreshed one from the other: only a name a step between them looked at can differ.
        return _diff_of(before.entries, after.entries, history[before.generation : after.generation])
    old, new = before.entries, after.entries
    removed = tuple(sorted(old.keys() - new.keys()))
    # A refreshed snapshot keeps the very object for an unchanged entry: `is` settles most, and
    # is asked of every entry without a Python loop (the tree holds every case of the run).
    names = list(old)
    now = list(map(new.get, names))
    moved = compress(zip(names, old.values(), now, strict=True), map(is_not, old.values(), now))
    changed = tuple(sorted(p for p, was, is_ in moved if is_ is not None and is_ != was))
    added = tuple(sorted(new.keys() - old.keys()))
    return Effect(removed=removed, changed=changed, added=added)


def _diff_of(
    old: Mapping[str, FileIdentity], new: Mapping[str, FileIdentity], steps: list[frozenset[str]]
) -> Effect:
    """`diff` where every entry not named in `steps` is the very same object in both."""
    names = frozenset().union(*steps)
    removed = tuple(sorted(p for p in names if p in old and p not in new))
    added = tuple(sorted(p for p in names if p in new and p not in old))
    changed = tuple(
        sorted(
            p
            for p in names
            if (was := old.get(p)) is not None
            and (is_ := new.get(p)) is not None
            and is_ is not was
            and is_ != was
        )
    )
    return Effect(removed=removed, changed=changed, added=added)


@dataclass(frozen=True)
class Case:
    """The files one attack may touch, and the ones it must not."""

    name: str
    base: Path
    root: Path
    directory: Path
    victim: Path
    # The sandbox's folders beside the root, where this case's other canaries are.
    outside: Path
    sibling: Path
    # Makes this case's folder and canary in one of those folders, and returns the canary's path.
    beside: Callable[[Path], Path] = field(repr=False, compare=False)

    # Every attack makes a case and a Path costs some twenty calls to build, but few attacks name
    # their canaries: these are built on first use (the inside canary's file is made with the case).
    @cached_property
    def inside_canary(self) -> Path:
        return self.directory / "canary.txt"

    # Only the attacks that send a path outside the root name these (out-of-root, a link or a parent
    # swapped to outside): made then, not for every case (two folders and two files that every
    # other attack would make, watch, look at and remove without using). Named before the attack's
    # snapshot, they are in it and watched as the rest of the case.
    @cached_property
    def outside_canary(self) -> Path:
        return self.beside(self.outside)

    @cached_property
    def sibling_canary(self) -> Path:
        return self.beside(self.sibling)

    def rel(self, path: Path) -> str:
        """A path as the sandbox names it in evidence ("root/…" for a served root too)."""
        # Every attack names its files here: a Path's text is normalised (no "//", no "." part),
        # so a prefix of it settles what `relative_to` settles by building three paths.
        text, base = os.fspath(path), f"{self.base}/"
        if text.startswith(base):
            return text[len(base) :]
        root = f"{self.root}/"
        if text.startswith(root):
            return f"root/{text[len(root) :]}"
        # The base or root themselves, and anything else: as pathlib says (or raises).
        if path.is_relative_to(self.base):
            return path.relative_to(self.base).as_posix()
        return f"root/{path.relative_to(self.root).as_posix()}"

    def add_file(self, relative: str, text: str = VICTIM_TEXT) -> Path:
        """Another file inside this case's directory (nested paths allowed)."""
        path = self.directory / relative
        try:
            path.write_text(text)
        except FileNotFoundError:  # a nested path, or a case directory the target removed
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return path


# Every sandbox not yet removed: what a last-resort cleanup removes (a run being stopped).
LIVE: set[Path] = set()


def remove_every_sandbox() -> None:
    """Last resort: remove every sandbox this process made and has not removed (never anything else)."""
    for base in list(LIVE):
        shutil.rmtree(base, ignore_errors=True)
        LIVE.discard(base)


# The file in each sandbox naming the process that made it: a later run removes a sandbox whose owner is gone.
OWNER = "owner"
_swept: set[str] = set()


def _process_start(pid: int) -> str:
    """When `pid` started (clock ticks since boot), or "" where /proc does not say: tells a reused pid apart."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19]
    except (OSError, IndexError):
        return ""


def mark_owner(directory: Path) -> None:
    """Name this process as `directory`'s owner (its pid and start time)."""
    pid = os.getpid()
    (directory / OWNER).write_text(f"{pid} {_process_start(pid)}\n")


def _owner_gone(directory: Path) -> bool:
    try:
        pid_text, _, started = (directory / OWNER).read_text().strip().partition(" ")
        pid = int(pid_text)
    except (OSError, ValueError):
        return False  # no marker (another tool's folder, or one being made): never ours to remove
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return bool(started) and _process_start(pid) not in ("", started)


def sweep(parent: str | None, prefix: str) -> list[Path]:
    """Remove the sandboxes in `parent` whose owner is gone (a run killed before it could); once per process."""
    where = parent or tempfile.gettempdir()
    if f"{where}\0{prefix}" in _swept:
        return []
    _swept.add(f"{where}\0{prefix}")
    removed = []
    try:
        names = [name for name in os.listdir(where) if name.startswith(prefix)]
    except OSError:
        return []
    for name in names:
        directory = Path(where) / name
        if directory.is_dir() and not directory.is_symlink() and _owner_gone(directory):
            shutil.rmtree(directory, ignore_errors=True)
            removed.append(directory)
    return removed


class Sandbox:
    """A private temporary directory; the harness deletes nothing else."""

    def __init__(self, prefix: str = "mcp-audit-", served_root: Path | None = None) -> None:
        scratch = scratch_directory()
        sweep(scratch, prefix)
        # realpath: on some systems the temp dir itself sits behind a link, and
        # a server that resolves paths must see the same root the harness does.
        self.base = Path(os.path.realpath(tempfile.mkdtemp(prefix=prefix, dir=scratch)))
        mark_owner(self.base)
        LIVE.add(self.base)
        self.outside = self.base / "outside"
        self.logs = self.base / "logs"
        if served_root is None:
            self.root = self.base / "root"
            self.cases = self.root
            # Shares the root's name as a prefix: catches containment by string prefix.
            self.sibling = self.base / "root-evil"
            # Hard links that keep a victim's inode alive: on the root's filesystem, unwatched.
            self.keep = self.base / "keep"
            self.root.mkdir()
        else:
            self.root = Path(os.path.realpath(served_root))
            own = Path(tempfile.mkdtemp(prefix=prefix, dir=self.root))
            self.cases, self.keep = own / "cases", own / "keep"
            self.cases.mkdir()
            self.sibling = self.base / "beside-root"
        self.sibling_shares_prefix = served_root is None
        for directory in (self.outside, self.sibling, self.logs, self.keep):
            directory.mkdir(exist_ok=True)
        # Named as the root sees them, so evidence reads the same either way.
        cases = "root" if self.cases == self.root else f"root/{self.cases.relative_to(self.root).as_posix()}"
        self._cases_label = cases
        self._watched = {cases: self.cases, "outside": self.outside, "root-evil": self.sibling}
        self._labels = {self.outside: "outside", self.sibling: "root-evil"}
        # The case made last, and its folders beside the root once named: looked at entry by entry.
        self._pinned: list[str] = []
        self._count = 0
        self._scanner = TreeScanner(self._watched)

    def new_case(self, label: str = "case") -> Case:
        return self.make_case(self.reserve_case(label))

    def reserve_case(self, label: str = "case") -> str:
        """The next case's name, numbered in order; nothing is made on disk until `make_case`.

        An attack that sends nothing (not applicable before its first request) never makes
        its case, and the cases after it keep the numbers they would have had.
        """
        self._count += 1
        return f"{self._count:03d}-{_slug(label)}"

    @staticmethod
    def number(name: str) -> str:
        """Case `name`'s number, as `reserve_case` gave it (`17`); "" for a name it did not give.

        Nothing else in the world has it: a use of an action made for the case is marked with it
        (`target.arguments.for_use`), so what it writes is its own.
        """
        head = name.partition("-")[0]
        return str(int(head)) if head.isdigit() else ""

    def case_dir(self, name: str) -> str:
        """The directory of case `name` as evidence names it (`Case.rel`), whether made or not."""
        return f"{self._cases_label}/{name}"

    def make_case(self, name: str) -> Case:
        """The case called `name` (from `reserve_case`): its directory, victim and canary."""
        # Every attack passes here: the folder and files are made by their text, os-level.
        home = _made_folder(self.cases, name)
        # Whatever a directory's mtime says, what the harness writes is seen.
        own = f"{self._cases_label}/{name}"
        self._scanner.mark([self._cases_label, own])
        # The case under attack is looked at entry by entry at every snapshot, events or not.
        self._pinned = [own]
        self._scanner.pin(self._pinned)
        directory = self.cases / name
        case = Case(
            name=name,
            base=self.base,
            root=self.root,
            directory=directory,
            victim=directory / "victim.txt",
            outside=self.outside,
            sibling=self.sibling,
            beside=partial(self._canary_beside, name),
        )
        _write_new(f"{home}/victim.txt", _VICTIM_BYTES)
        _write_new(f"{home}/canary.txt", _CANARY_BYTES)
        return case

    def _canary_beside(self, name: str, folder: Path) -> Path:
        """Case `name`'s folder and canary in `folder` (outside, or the sibling): made, marked and pinned."""
        home = _made_folder(folder, name)
        label = self._labels[folder]
        own = f"{label}/{name}"
        self._scanner.mark([label, own])
        self._pinned.append(own)
        self._scanner.pin(self._pinned)
        _write_new(f"{home}/canary.txt", _CANARY_BYTES)
        return Path(home, "canary.txt")

    def snapshot(self) -> TreeSnapshot:
        """The watched tree now; refreshed from the previous snapshot (see `scan`)."""
        return self._scanner.snapshot()

    def remove(self) -> None:
        self._scanner.close()
        # rmtree does not follow links, so a link planted by an attack (or by
        # a hostile server) pointing elsewhere is removed, not its destination.
        if self.cases != self.root:
            shutil.rmtree(self.cases.parent, ignore_errors=True)
        shutil.rmtree(self.base, ignore_errors=True)
        LIVE.discard(self.base)


def _made_folder(parent: Path, name: str) -> str:
    """The new folder `name` in `parent`, made; its path's text."""
    home = f"{parent}/{name}"
    try:
        os.mkdir(home)
    except FileNotFoundError:
        # A target that removed a whole directory (even the root) must
        # not stop later attacks from getting a fresh case.
        Path(home).mkdir(parents=True)
    return home


def _write_new(path: str, data: bytes) -> None:
    # os-level: two files for every attack.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def scratch_directory() -> str | None:
    """Where sandboxes go: the user's TMPDIR if set, else RAM (/dev/shm) where there is one.

    Every attack creates a case (a directory, two files); on a slow
    disk that costs more than the attack's round trips. A sandbox is small and
    short-lived, so memory is the right place for it unless the user says otherwise.
    """
    if any(os.environ.get(name) for name in ("TMPDIR", "TEMP", "TMP")):
        return None
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def _slug(label: str) -> str:
    lowered = label.lower()
    if lowered.isascii():
        # Every case's name: one table lookup per character rather than a Python step for each.
        cleaned = lowered.translate(_ASCII_SLUG).strip("-")
    else:
        cleaned = "".join(ch if ch.isalnum() else "-" for ch in lowered).strip("-")
    return cleaned[:40] or "case"


# Printable or not, every ASCII character that is not a letter or digit becomes a dash (as isalnum says).
_ASCII_SLUG = {code: "-" for code in range(128) if not chr(code).isalnum()}
