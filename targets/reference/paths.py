"""Path confinement for the reference server: resolve, check, and delete beneath the root.

The careful policy refuses anything that is not a regular file reached from the root
through real directories only. Each flaw switch weakens exactly one of these checks, so a
harness attack can be shown to matter on a server that differs in that check alone.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

PathMode = Literal["relative", "absolute", "both"]
LinkCheck = Literal["every-component", "after-resolve", "last-component", "none"]
# How "inside the root" is judged: on the resolved location (careful), or by one flaw each.
Containment = Literal["resolved", "prefix", "lexical", "none"]

MAX_PATH_CHARS = 4096


class Refused(Exception):
    """A request the server will not act on; the message is shown to the client."""


class Missing(Refused):
    """The path names nothing (any more)."""


@dataclass(frozen=True, slots=True)
class Identity:
    """What the user was asked about: a replaced or rewritten file no longer matches."""

    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> Identity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True, slots=True)
class Target:
    real: Path  # absolute, symlink-free location on disk
    parts: tuple[str, ...]  # real location relative to the root; only a flaw lets ".." appear
    identity: Identity
    is_dir: bool = False  # only the deletes-directories flaw lets a directory through

    @property
    def rel(self) -> str:
        return "/".join(self.parts)


@dataclass(frozen=True, slots=True)
class PathPolicy:
    root: Path  # resolved at construction
    given_root: Path  # as the operator spelled it (absolute), for absolute arguments
    mode: PathMode = "both"
    containment: Containment = "resolved"
    link_check: LinkCheck = "every-component"
    allow_directories: bool = False
    cut_at_nul: bool = False

    @classmethod
    def create(
        cls,
        root: str | Path,
        *,
        mode: PathMode = "both",
        containment: Containment = "resolved",
        link_check: LinkCheck = "every-component",
        allow_directories: bool = False,
        cut_at_nul: bool = False,
    ) -> PathPolicy:
        given = Path(os.path.abspath(root))  # "--root ." means the working directory
        real = given.resolve(strict=True)
        if not real.is_dir():
            raise ValueError(f"root is not a directory: {given}")
        return cls(real, given, mode, containment, link_check, allow_directories, cut_at_nul)

    def resolve(self, raw: object, *, check_containment: bool = True) -> Target:
        """Every check the server makes before asking and again before acting."""
        text = _syntax(raw, cut_at_nul=self.cut_at_nul)
        candidate = self._candidate(text)
        try:
            real = Path(os.path.realpath(candidate))
            if real == self.root and not self.allow_directories:  # FLAW deletes-directories lets it by
                raise Refused("the root directory itself cannot be deleted")
            if check_containment and not self._contains(candidate, real):
                raise Refused(f"{text!r} is outside the root")
            self._check_links(text, candidate, real)
            st = os.lstat(real)
        except FileNotFoundError:
            raise Missing(f"{text!r} does not exist") from None
        except (OSError, ValueError) as exc:  # ValueError: unencodable name
            raise Refused(f"cannot inspect {text!r}: {exc.__class__.__name__}") from None
        is_dir = stat.S_ISDIR(st.st_mode)
        if is_dir and not self.allow_directories:
            raise Refused(f"{text!r} is a directory; this tool deletes single files")
        if not is_dir and not stat.S_ISREG(st.st_mode):
            raise Refused(f"{text!r} is not a regular file")
        parts = tuple(os.path.relpath(real, self.root).split(os.sep))
        return Target(real=real, parts=parts, identity=Identity.of(st), is_dir=is_dir)

    def entry(self, raw: object) -> Target:
        """FLAW unlinks-the-name: the entry a path names, as `rm` takes it, the entry itself never followed.

        Its folder is resolved and kept inside the root; the entry is whatever has the name (a link is
        an entry like a file), so a link that leads out of the root is asked about as the link it is.
        """
        text = _syntax(raw, cut_at_nul=self.cut_at_nul)
        name = PurePosixPath(text).name
        if name in ("", ".", ".."):
            raise Refused(f"{text!r} names no file")
        folder = self._candidate(str(PurePosixPath(text).parent))
        real_folder = Path(os.path.realpath(folder))
        if not self._contains(folder, real_folder):
            raise Refused(f"{text!r} is outside the root")
        real = real_folder / name
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            raise Missing(f"{text!r} does not exist") from None
        except (OSError, ValueError) as exc:  # ValueError: unencodable name
            raise Refused(f"cannot inspect {text!r}: {exc.__class__.__name__}") from None
        if stat.S_ISDIR(st.st_mode):
            raise Refused(f"{text!r} is a directory; this tool deletes single files")
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise Refused(f"{text!r} is not a regular file")
        parts = tuple(os.path.relpath(real, self.root).split(os.sep))
        return Target(real=real, parts=parts, identity=Identity.of(st))

    def place(self, raw: object) -> tuple[str, ...]:
        """Where a file that is not there would be created: every check of `resolve` but the file's own."""
        text = _syntax(raw, cut_at_nul=self.cut_at_nul)
        name = PurePosixPath(text).name
        if name in ("", ".", ".."):
            raise Refused(f"{text!r} names no file")
        folder = str(PurePosixPath(text).parent)
        candidate = self._candidate(folder)
        real = Path(os.path.realpath(candidate))
        if not self._contains(candidate, real):
            raise Refused(f"{text!r} is outside the root")
        self._check_links(folder, candidate, real)  # the folder's: the file itself is not there
        return tuple(os.path.relpath(real / name, self.root).split(os.sep))

    def _candidate(self, text: str) -> Path:
        absolute = text.startswith("/")
        if self.mode == "relative" and absolute:
            raise Refused("absolute paths are not accepted; give a path relative to the root")
        if self.mode == "absolute" and not absolute:
            raise Refused("relative paths are not accepted; give an absolute path")
        # An absolute argument replaces the root in the join, then is confined like the rest.
        return self.root / text

    def _contains(self, candidate: Path, real: Path) -> bool:
        if self.containment == "none":
            return True  # FLAW no-containment: the whole filesystem is in reach
        if self.containment == "prefix":
            # FLAW prefix-containment: "/srv/root-evil" starts with "/srv/root".
            return str(real).startswith(str(self.root))
        if self.containment == "lexical":
            # FLAW lexical-containment: judged on the path as written, while the action follows
            # its links; "root/link" is inside here even when the link points elsewhere.
            written = Path(os.path.normpath(candidate))
            return written.is_relative_to(self.root) or written.is_relative_to(self.given_root)
        return real.is_relative_to(self.root)

    def _check_links(self, text: str, candidate: Path, real: Path) -> None:
        if self.link_check == "none":
            return  # lexical-containment: "the path as written is inside" is all it asks
        if self.link_check == "after-resolve":
            # FLAW link-after-resolve: `real` has no links left, so this inspects the destination.
            if real.is_symlink():
                raise Refused(f"{text!r} is a symbolic link")
            return
        if self.link_check == "last-component":
            # FLAW link-last-component-only: a parent directory swapped for a link passes.
            if candidate.is_symlink():
                raise Refused(f"{text!r} is a symbolic link")
            return
        # Walk the path as written, from the root, refusing a link at any step. Ending
        # anywhere but the resolved location means something was redirected on the way.
        here = self.root
        for part in self._parts_from_root(text):
            here = here.parent if part == ".." else here / part
            if part != ".." and stat.S_ISLNK(os.lstat(here).st_mode):
                raise Refused(f"{text!r} goes through a symbolic link ({part!r})")
        if here != real:
            raise Refused(f"{text!r} does not name its own location")

    def _parts_from_root(self, text: str) -> Sequence[str]:
        pure = PurePosixPath(text)  # drops "." and repeated slashes, keeps ".."
        if not pure.is_absolute():
            return pure.parts
        for root in (self.root, self.given_root):
            if pure.parts[: len(root.parts)] == root.parts:
                return pure.parts[len(root.parts) :]
        # Lexically outside the root: walk up to it, then down again.
        return PurePosixPath(os.path.relpath(text, self.root)).parts


def _syntax(raw: object, *, cut_at_nul: bool = False) -> str:
    if not isinstance(raw, str):
        raise Refused("the path must be a string")
    if cut_at_nul:
        raw = raw.split("\x00", 1)[0]  # FLAW truncates-at-nul: C-string semantics, "a.txt\0.png" is a.txt
    if raw == "":
        raise Refused("the path is empty")
    if "\x00" in raw:
        raise Refused("the path contains a NUL byte")
    if len(raw) > MAX_PATH_CHARS or len(raw.encode("utf-8", "surrogatepass")) > MAX_PATH_CHARS:
        raise Refused(f"the path is longer than {MAX_PATH_CHARS} characters")
    return raw


def unlink_beneath(root: Path, parts: Sequence[str], expected: Identity | None) -> None:
    """Delete `root/parts` through directory descriptors that never follow a link.

    The final entry is compared with `expected` on the parent's descriptor just before
    the unlink, so a swap after the last check has only the stat-to-unlink gap left.
    `expected=None` skips the comparison (the no-identity-check flaw).
    """

    def unlink(parent: int) -> None:
        _check_file(os.stat(parts[-1], dir_fd=parent, follow_symlinks=False), expected)
        os.unlink(parts[-1], dir_fd=parent)

    _beneath(root, parts, unlink, "deletion")


def truncate_beneath(root: Path, parts: Sequence[str], expected: Identity | None) -> None:
    """Truncate `root/parts` to zero bytes; the identity is checked on the very descriptor written."""

    def truncate(parent: int) -> None:
        # O_NONBLOCK: a FIFO swapped in after the checks fails to open instead of hanging.
        flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(parts[-1], flags, dir_fd=parent)
        try:
            _check_file(os.fstat(fd), expected)
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)

    _beneath(root, parts, truncate, "truncation")


def write_beneath(
    root: Path,
    parts: Sequence[str],
    expected: Identity | None,
    data: bytes,
    between: Callable[[], object] | None = None,
) -> None:
    """Replace the content of `root/parts`; the identity is checked on the very descriptor written.

    In place, in two steps: truncated, then written (`between` runs in the gap, the file empty).
    """

    def write(parent: int) -> None:
        flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        fd = os.open(parts[-1], flags, dir_fd=parent)
        try:
            _check_file(os.fstat(fd), expected)
            os.ftruncate(fd, 0)
            if between is not None:
                between()
            os.write(fd, data)
        finally:
            os.close(fd)

    _beneath(root, parts, write, "write")


def create_beneath(root: Path, parts: Sequence[str], data: bytes) -> None:
    """Create `root/parts`, which must not exist (O_EXCL), beneath directories that are no links."""

    def create(parent: int) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(parts[-1], flags, 0o644, dir_fd=parent)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    _beneath(root, parts, create, "write")


def remove_tree(real: Path, expected: Identity | None) -> None:
    """FLAW deletes-directories: a whole directory (even the root) goes, after one identity check."""
    try:
        st = os.lstat(real)
        if not stat.S_ISDIR(st.st_mode):
            raise Refused("the directory is no longer a directory")
        if expected is not None and Identity.of(st) != expected:
            raise Refused("the directory changed while waiting for confirmation")
        shutil.rmtree(real)
    except FileNotFoundError:
        raise Refused("the directory disappeared while waiting for confirmation") from None
    except OSError as exc:
        raise Refused(f"the filesystem refused the deletion: {exc.strerror}") from None


def follow_and_act(root: Path, raw: str, effect: str) -> Identity:
    """FLAW no-recheck: round 2 acts on wherever the name leads now, with no check at all.

    The name is resolved again, following every link, and what it reaches is removed
    (a directory with shutil.rmtree) or truncated. Returns what was acted on.
    """
    real = Path(os.path.realpath(root / raw))
    try:
        st = os.lstat(real)
        if effect == "truncate":
            os.truncate(real, 0)
        elif stat.S_ISDIR(st.st_mode):
            shutil.rmtree(real)
        else:
            os.unlink(real)
    except FileNotFoundError:
        raise Missing(f"{raw!r} does not exist") from None
    except OSError as exc:
        raise Refused(f"the filesystem refused: {exc.strerror}") from None
    return Identity.of(st)


def act_on_name(root: Path, raw: str, effect: str) -> int:
    """FLAW unlinks-the-name: on the answer, the name is acted on as it is now, nothing checked again.

    A deletion unlinks whatever entry has the name (a link put there goes, never what it leads to,
    as `rm` does; its folders are followed); a truncation opens the name, links followed, as
    `truncate` does. Returns the size of what had the name.
    """
    try:
        if effect == "truncate":
            size = os.stat(root / raw).st_size
            os.truncate(root / raw, 0)
        else:
            size = os.lstat(root / raw).st_size
            os.unlink(root / raw)
    except FileNotFoundError:
        raise Missing(f"{raw!r} does not exist") from None
    except OSError as exc:
        raise Refused(f"the filesystem refused: {exc.strerror}") from None
    return size


def _check_file(st: os.stat_result, expected: Identity | None) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise Refused("the file is no longer a regular file")
    if expected is not None and Identity.of(st) != expected:
        raise Refused("the file changed while waiting for confirmation")


def _beneath(root: Path, parts: Sequence[str], act: Callable[[int], None], what: str) -> None:
    """Open each directory of `parts[:-1]` relative to the previous one with O_NOFOLLOW, then act."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    fd = os.open(root, flags | os.O_NOFOLLOW)  # the root itself was resolved at start-up
    try:
        for part in parts[:-1]:
            child = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = child
        act(fd)
    except FileNotFoundError:
        raise Refused("the file disappeared while waiting for confirmation") from None
    except OSError as exc:
        # ELOOP / ENOTDIR: a component became a link or a non-directory after the checks.
        raise Refused(f"the filesystem refused the {what}: {exc.strerror}") from None
    finally:
        os.close(fd)
