"""The target confined by default: its own user, mount, PID and (where it needs no peer) network namespace.

Every process the harness starts for a target (over stdio, over HTTP, a zygote) is started through
`confine_main.py` (the standard library only, on the harness's own interpreter), which takes
namespaces of its own with the kernel's unprivileged user namespaces (the `unshare(2)` system call;
bubblewrap is not used) before the target runs:

- files: the file system read-only but the sandbox (the root, and the oracle's folders beside it);
  `/tmp`, `/var/tmp` and the home replaced by empty folders kept in the sandbox (`elsewhere/`), so a
  write there is seen whole after the run (`outside_writes`) and never lands on the machine; what the
  target needs from those folders (its interpreter, a venv, its script) bound back read-only;
- processes: a PID namespace whose init exits with the target, so the kernel kills whatever the target
  left (a detached daemon); the launcher dies with the harness, even one killed with SIGKILL;
- network: a namespace with loopback only, unless the target must meet the harness on loopback (it
  serves HTTP, it sends to the sink) or the profile says `network: host`: then the host's.

Where the kernel refuses (no user namespaces, not Linux), the run says so in one line and goes on as
before, unless confinement is required (`--mcp-require-confinement`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import TargetError
from ..profile.loader import Profile

SCRIPT = str(Path(__file__).with_name("confine_main.py"))
# The sandbox's folder of stand-ins, beside the root and never watched by the attack oracle.
ELSEWHERE = "elsewhere"
# Bytes of each write outside the root kept for the report.
EXCERPT = 200
# An address on loopback (or the sink's, before it is filled in) in a command, a variable or a file.
_LOOPBACK = re.compile(r"127\.\d+\.\d+\.\d+|\blocalhost\b|\[::1\]|\{sink\}|\{port\}")
# Seconds the one probe of a run may take.
_PROBE_TIMEOUT = 15.0


@dataclass(frozen=True, slots=True)
class Regime:
    """How this run's target processes are confined; `why` says what is not, and why."""

    confined: bool
    net: bool = False
    why: str = ""

    def line(self) -> str:
        if not self.confined:
            return f"none: {self.why}"
        if self.net:
            return "unshare (user, pid, mount, net loopback-only)"
        return f"unshare (user, pid, mount; network: host, {self.why})"


def hidden_folders() -> list[str]:
    """The folders a target sees empty: the temporary ones and the home (the environment's and the user's)."""
    folders = ["/tmp", "/var/tmp"]
    homes = [os.environ.get("HOME", "")]
    with contextlib.suppress(KeyError):
        homes.append(pwd.getpwuid(os.getuid()).pw_dir)
    for home in homes:
        if home and os.path.isdir(home) and os.path.realpath(home) != "/":
            folders.append(os.path.realpath(home))
    return list(dict.fromkeys(folders))


def _peer(profile: Profile) -> str:
    """Why the target must share the harness's loopback, or "" when it need not."""
    if profile.network == "host":
        return "as the profile says (network: host)"
    if profile.serves_http:
        return "the target serves HTTP to the harness"
    if profile.uses_sink:
        return "the target sends to the harness's sink"
    if profile.servers is not None:
        return "several servers share the root"
    words = [profile.command, *profile.env.values(), *profile.files.values()]
    if any(_LOOPBACK.search(word) for word in words):
        return "the target is given a loopback address"
    if getattr(profile.confirmation, "human", None) is not None:
        return "the person's steps may reach the target on loopback"
    if profile.url_elicitation.person or profile.url_elicitation.other_person:
        return "the person opens the target's URL-mode pages"
    return ""


def regime(profile: Profile) -> Regime:
    """The regime for this profile's processes (the kernel asked once per run); TargetError where required."""
    if profile.is_url:
        why = "the target is already running elsewhere (a URL)"
    elif profile.is_in_process:
        why = "an in-process target runs inside the harness"
    elif profile.confinement == "off":
        why = "turned off (--mcp-no-confinement)"
    elif not sys.platform.startswith("linux"):
        why = f"no Linux namespaces on {sys.platform}"
    else:
        peer = _peer(profile)
        refused = _probe(not peer)
        if refused is None:
            return Regime(True, net=not peer, why=peer)
        why = refused
    if profile.confinement == "required" and not profile.is_in_process and not profile.is_url:
        raise TargetError(
            f"the target cannot be confined: {why}; allow unprivileged user namespaces (see "
            "docs/how-to/confinement.md), or drop --mcp-require-confinement"
        )
    return Regime(False, why=why)


@functools.cache
def _probe(net: bool) -> str | None:
    """None when the kernel lets `confine_main.py` set everything up here; else why not, in a few words."""
    with tempfile.TemporaryDirectory(prefix="mcp-confine-probe-") as scratch:
        base = Path(scratch)
        spec = _spec(base, net, [])
        try:
            done = subprocess.run(
                [sys.executable, "-I", "-S", SCRIPT, "probe", json.dumps(spec)],
                capture_output=True,
                timeout=_PROBE_TIMEOUT,
                cwd=base,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"the namespace set-up did not run ({type(exc).__name__})"
    if done.stdout.strip() == b"ok":
        return None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    return (said[-1].removeprefix("confine: ") if said else "the kernel refused") + " (user namespaces)"


def _stand_ins(base: Path) -> dict[str, str]:
    return {
        folder: str(base / ELSEWHERE / (folder.strip("/").replace("/", "-") or "root"))
        for folder in hidden_folders()
    }


def _spec(base: Path, net: bool, reveal: Sequence[str], writable: Sequence[str] = ()) -> dict[str, object]:
    hide = _stand_ins(base)
    for stand_in in hide.values():
        os.makedirs(stand_in, exist_ok=True)
    return {
        "harness": os.getpid(),
        "net": net,
        "hide": hide,
        "writable": [str(base), *writable],
        "reveal": list(dict.fromkeys(reveal)),
    }


def _under(path: str, folders: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _needed(argv: Sequence[str], cwd: Path) -> Iterator[str]:
    """What a command needs from the hidden folders: its program's prefix, and the paths it names."""
    program = shutil.which(argv[0]) or argv[0]
    programs = [program, os.path.realpath(program), sys.executable, os.path.realpath(sys.executable)]
    interpreter = _shebang(program)
    if interpreter:
        # A console script: the interpreter its first line names (a venv's python, and where it links to).
        programs += [interpreter, os.path.realpath(interpreter)]
    for path in programs:
        folder = os.path.dirname(os.path.abspath(path))
        # A program in a prefix's bin/ (a venv, a pyenv version, an nvm node): the whole prefix.
        yield os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder
    for word in argv[1:]:
        for candidate in (word, word.partition("=")[2]):
            if not candidate or "\0" in candidate:
                continue
            path = os.path.realpath(os.path.join(cwd, candidate))
            if os.path.isdir(path):
                yield path
            elif os.path.exists(path):
                yield os.path.dirname(path)


def _checkout(path: str, folders: Sequence[str]) -> str:
    """A path in a temporary folder widened to its top folder there (a checkout in /tmp whose script
    imports its neighbours); in the home, only the path itself. Never a folder holding a hidden one."""
    for hidden in ("/tmp", "/var/tmp"):
        if hidden in folders and path != hidden and _under(path, [hidden]):
            top = os.path.join(hidden, os.path.relpath(path, hidden).split(os.sep)[0])
            if os.path.isdir(top) and not any(_under(other, [top]) for other in folders):
                return top
    return path


def _outermost(paths: Sequence[str], folders: Sequence[str]) -> list[str]:
    """Each folder once, none inside another (a bind inside a bind cannot be made read-only again), and
    none holding a hidden folder (it would show what the hidden one keeps)."""
    kept: list[str] = []
    for path in sorted(dict.fromkeys(paths), key=len):
        if any(_under(path, [outer]) for outer in kept):
            continue
        if any(_under(other, [path]) and other != path for other in folders):
            continue
        kept.append(path)
    return kept


def _project() -> Iterator[str]:
    """The folder the audit runs from (the project under audit), read-only, when it lies below a hidden one.

    A script names only itself, yet imports its neighbours (a server beside a package of its own, a
    checkout in /tmp): without its project the target cannot start. A hidden folder itself (the home,
    /tmp) is never revealed whole, so an audit started in the home still hides the home.
    """
    here = os.path.realpath(os.getcwd())
    if here not in hidden_folders():
        yield here


def _shebang(program: str) -> str:
    """The interpreter a script's `#!` line names, or ""."""
    try:
        with open(program, "rb") as handle:
            first = handle.readline(512)
    except OSError:
        return ""
    words = first[2:].decode(errors="replace").split() if first.startswith(b"#!") else []
    return words[0] if words and words[0].startswith("/") else ""


def wrap(
    regime: Regime, argv: Sequence[str], base: Path, cwd: Path, writable: Sequence[str] = ()
) -> list[str]:
    """`argv` started confined on the sandbox `base` (as is when the regime confines nothing)."""
    if not regime.confined:
        return list(argv)
    folders = hidden_folders()
    needed = [_checkout(path, folders) for path in _needed(argv, cwd)]
    reveal = _outermost([path for path in [*needed, *_project()] if _under(path, folders)], folders)
    # What is writable stays so: a path in the sandbox (the root a command names) is never bound read-only.
    reveal = [path for path in reveal if not _under(path, [os.path.realpath(base), *writable])]
    spec = _spec(base, regime.net, reveal, writable)
    program = shutil.which(argv[0]) or argv[0]
    return [sys.executable, "-I", "-S", SCRIPT, "run", json.dumps(spec), "--", program, *argv[1:]]


def outside_writes(base: Path) -> list[dict[str, object]]:
    """Every file a confined target wrote outside the root: its path as the target saw it, and its start."""
    found: list[dict[str, object]] = []
    for folder, stand_in in _stand_ins_present(base):
        for directory, _, files in os.walk(stand_in):
            for name in sorted(files):
                path = Path(directory) / name
                try:
                    with path.open("rb") as handle:
                        head = handle.read(EXCERPT)
                    size = path.lstat().st_size
                except OSError:
                    continue
                seen = folder.rstrip("/") + "/" + path.relative_to(stand_in).as_posix()
                found.append({"path": seen, "bytes": size, "text": head.decode(errors="replace")})
    return found


def _stand_ins_present(base: Path) -> Iterator[tuple[str, Path]]:
    for folder, stand_in in _stand_ins(base).items() if (base / ELSEWHERE).is_dir() else ():
        if os.path.isdir(stand_in):
            yield folder, Path(stand_in)
