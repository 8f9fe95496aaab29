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
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..errors import TargetError
from ..profile.loader import Profile
from . import netns

SCRIPT = str(Path(__file__).with_name("confine_main.py"))
# The sandbox's folder of stand-ins, beside the root and never watched by the attack oracle.
ELSEWHERE = "elsewhere"
# Bytes of each write outside the root kept for the report.
EXCERPT = 200
# An address on loopback (or the sink's, before it is filled in) in a command, a variable or a file.
_LOOPBACK = re.compile(r"127\.\d+\.\d+\.\d+|\blocalhost\b|\[::1\]|\{sink\}|\{port\}")
# The port after a loopback address.
_PORT = re.compile(r":(\d{1,5})\b")
# Seconds the one probe of a run may take.
_PROBE_TIMEOUT = 15.0


@dataclass(frozen=True, slots=True)
class Regime:
    """How this run's target processes are confined; `why` says what is not, and why.

    `shared`: the network namespace is the run's shared one (netns.py), where the sink and the
    fakes are reached, rather than one of the target's own.
    """

    confined: bool
    net: bool = False
    why: str = ""
    shared: bool = False

    def line(self) -> str:
        if not self.confined:
            return f"none: {self.why}"
        if self.shared:
            return f"unshare (user, pid, mount, net loopback-only shared with the harness: {self.why})"
        if self.net:
            return "unshare (user, pid, mount, net loopback-only)"
        return f"unshare (user, pid, mount; network: host, {self.why})"


class Confined(NamedTuple):
    """A zygote's confinement: the regime, the folders its worlds are made in, the commands it forks."""

    regime: Regime
    worlds: tuple[str, ...]
    forks: tuple[tuple[str, ...], ...]


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


def _peer(profile: Profile) -> tuple[str, str]:
    """Which network the target needs, and why: "own" (none to share), "shared" (the run's, where the
    harness's sink and fakes are reached: netns.py) or "host" (a peer the relay cannot know)."""
    if profile.network == "host":
        return "host", "as the profile says (network: host)"
    if profile.serves_http:
        return "shared", "the target serves HTTP to the harness"
    if profile.uses_sink:
        return "shared", "the target sends to the harness's sink"
    if profile.servers is not None:
        return "shared", "several servers share the root"
    words = [profile.command, *profile.env.values(), *profile.files.values()]
    if any(_LOOPBACK.search(word) for word in words):
        if _fake_ports(profile) is not None:
            return "shared", "the target is given a loopback address"
        return "host", "the target is given a loopback address without a port"
    if _person_reaches_loopback(profile):
        return "host", "the person's steps may reach the target on loopback"
    if profile.url_elicitation.person or profile.url_elicitation.other_person:
        return "host", "the person opens the target's URL-mode pages"
    return "own", ""


def _person_reaches_loopback(profile: Profile) -> bool:
    """Whether a step the person (or another principal, or an approver) takes may reach the target.

    The person's steps run in the harness's network, so a target serving them on loopback (a device
    API, an approval page whose link it prints) must keep the host's. Only a request (`http`,
    `follow`), a value read from the target (a link, an address) or a command naming an address does;
    commands of the person's own CLI alone (`toolpermit approvals approve {id}`, a file in the root)
    and answers on its terminal need no network, and the target keeps none.
    """
    from ..confirmations.profile_keys import human_steps

    approver = profile.approver.steps if profile.approver is not None else ()
    others = [step for steps in profile.principal_steps.values() for step in steps]
    for step in (*human_steps(profile.confirmation), *approver, *others):
        if step.kind in ("http", "follow", "read"):
            return True
        line = getattr(step, "line", "")
        if _LOOPBACK.search(line) or "{url}" in line:
            return True
    return False


def _fake_ports(profile: Profile) -> list[int] | None:
    """The loopback ports the profile names (a fake's), or None when an address names no port."""
    ports: list[int] = []
    for word in [profile.command, *profile.env.values(), *profile.files.values()]:
        for found in _LOOPBACK.finditer(word):
            if found.group(0) in ("{sink}", "{port}"):
                continue
            port = _PORT.match(word, found.end())
            if word.startswith((":{port}", ":{sink}"), found.end()):
                continue
            if port is None:
                return None
            ports.append(int(port.group(1)))
    return ports


def _listening_here(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1.0)
        return probe.connect_ex(("127.0.0.1", port)) == 0


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
        kind, peer = _peer(profile)
        refused = _probe(kind == "own", _joined() if kind == "shared" else 0)
        if kind == "shared" and refused is not None:
            # The shared namespace cannot be made: the host's network, as before, and the line says so.
            kind, peer = "host", f"{peer}; no network namespace to share ({refused})"
            refused = _probe(False, 0)
        if refused is None:
            if kind == "shared":
                for port in _fake_ports(profile) or []:
                    # A fake the user started beside the run (one the target starts itself listens inside).
                    if _listening_here(port):
                        netns.shared().reverse(port)
            return Regime(True, net=kind != "host", why=peer, shared=kind == "shared")
        why = refused
    if profile.confinement == "required" and not profile.is_in_process and not profile.is_url:
        raise TargetError(
            f"the target cannot be confined: {why}; allow unprivileged user namespaces (see "
            "docs/how-to/confinement.md), or drop --mcp-require-confinement"
        )
    return Regime(False, why=why)


def _joined() -> int:
    """The pid of the run's shared namespace's holder, or -1 when it cannot be made."""
    try:
        return netns.shared().pid
    except OSError:
        return -1


@functools.cache
def _probe(net: bool, join: int = 0) -> str | None:
    """None when the kernel lets `confine_main.py` set everything up here; else why not, in a few words."""
    if join < 0:
        return "the shared network namespace's relay did not start"
    with tempfile.TemporaryDirectory(prefix="mcp-confine-probe-") as scratch:
        base = Path(scratch)
        spec = _spec(base, net, [], join=join)
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


def _spec(
    base: Path, net: bool, reveal: Sequence[str], writable: Sequence[str] = (), join: int = 0
) -> dict[str, object]:
    hide = _stand_ins(base)
    for stand_in in hide.values():
        os.makedirs(stand_in, exist_ok=True)
    return {
        "harness": os.getpid(),
        "net": net,
        "join": join,
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
        for candidate in _candidates(word):
            # The path as named and where it links to: a venv's python named after `env` is a link
            # out of the venv, and the venv itself must be seen for the link to resolve.
            named = os.path.abspath(os.path.join(cwd, candidate))
            for path in dict.fromkeys((named, os.path.realpath(named))):
                if os.path.isdir(path):
                    yield path
                elif os.path.exists(path):
                    yield os.path.dirname(path)


def _candidates(word: str) -> Iterator[str]:
    """What in one word of a command may name a path: the word, what follows its `=`, and the same of each word of a shell line in it.

    `sh -c 'exec python /srv/server.py --root .'` names its script inside one word: unseen there, the
    confined target could not open it (`can't open file`), though the command works by hand.
    """
    words = [word]
    if any(space in word for space in " \t\n"):
        with contextlib.suppress(ValueError):  # not a shell line after all (an unclosed quote)
            words += shlex.split(word)
    for each in words:
        for candidate in (each, each.partition("=")[2]):
            if candidate and "\0" not in candidate:
                yield candidate


def needed_by(argv: Sequence[str]) -> list[str]:
    """What `argv` needs to see: its program's prefix, and the existing absolute paths it names."""
    return list(_needed(argv, Path("/nonexistent")))


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
    regime: Regime,
    argv: Sequence[str],
    base: Path,
    cwd: Path,
    writable: Sequence[str] = (),
    also: Sequence[Sequence[str]] = (),
) -> list[str]:
    """`argv` started confined on the sandbox `base` (as is when the regime confines nothing).

    `also`: the commands a zygote will fork, whose interpreters and scripts it must see as well.
    """
    if not regime.confined:
        return list(argv)
    folders = hidden_folders()
    needed = [_checkout(path, folders) for command in [argv, *also] for path in _needed(command, cwd)]
    reveal = _outermost([path for path in [*needed, *_project()] if _under(path, folders)], folders)
    # What is writable stays so: a path in the sandbox (the root a command names) is never bound read-only.
    reveal = [path for path in reveal if not _under(path, [os.path.realpath(base), *writable])]
    join = netns.shared().pid if regime.shared else 0
    spec = _spec(base, regime.net and not regime.shared, reveal, writable, join=join)
    program = shutil.which(argv[0]) or argv[0]
    return [sys.executable, "-I", "-S", SCRIPT, "run", json.dumps(spec), "--", program, *argv[1:]]


def outside_writes(base: Path, *, take: bool = False) -> list[dict[str, object]]:
    """Every file a confined target wrote outside the root: its path as the target saw it, and its start.

    `take`: each file removed once read (a zygote's stand-ins, shared by the audits that keep it).
    """
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
                if take:
                    with contextlib.suppress(OSError):
                        path.unlink()
                seen = folder.rstrip("/") + "/" + path.relative_to(stand_in).as_posix()
                found.append({"path": seen, "bytes": size, "text": head.decode(errors="replace")})
    return found


def _stand_ins_present(base: Path) -> Iterator[tuple[str, Path]]:
    for folder, stand_in in _stand_ins(base).items() if (base / ELSEWHERE).is_dir() else ():
        if os.path.isdir(stand_in):
            yield folder, Path(stand_in)
