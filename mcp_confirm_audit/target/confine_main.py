"""The confined launch of a target: run as a script by the harness's interpreter, never imported by it.

    PYTHON -I -S confine_main.py run SPEC -- ARGV...   start ARGV confined as SPEC (JSON) says
    PYTHON -I -S confine_main.py probe SPEC              do the same set-up, start nothing, print "ok"

The standard library only (ctypes for the few system calls Python lacks), so it starts quickly.
In the harness's namespaces it watches the harness (a pidfd: gone, it kills the init), takes a user,
mount, PID (and, unless SPEC says `net: false`, network) namespace of its own, and forks the
namespace's init. The init makes the file system read-only but for the sandbox, puts empty folders
kept apart (SPEC's `hide`) over /tmp and the home, binds back read-only what the target needs
from them (its interpreter, its script), brings loopback up, and forks the target in a user
namespace nested in its own (so the target cannot undo the mounts). When the target exits, the init
exits, and the kernel kills every process left in the PID namespace: a daemon the target detached
included. When the harness dies, the outer process dies, and the init and all under it with it.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import signal
import socket
import struct
import sys

# The line the init writes on stderr when the target exits with a status other than 0.
EXITED = "confine: the target exited with status "

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY = -100, 0x8000, 1
SYS_MOUNT_SETATTR = 442  # the same number on every architecture (a syscall of 5.12 and later)
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


class Refused(Exception):
    """A step of the set-up the kernel refused: confinement is impossible here."""


def _check(result: int, what: str) -> None:
    if result < 0:
        errno = ctypes.get_errno()
        raise Refused(f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int) -> None:
    src = source.encode() if source is not None else None
    fs = fstype.encode() if fstype is not None else None
    _check(_libc.mount(src, target.encode(), fs, ctypes.c_ulong(flags), None), f"mount {target}")


def _setattr(path: str, *, set_: int = 0, clear: int = 0, recursive: bool = False) -> None:
    attr = MountAttr(set_, clear, 0, 0)
    flags = AT_RECURSIVE if recursive else 0
    result = _libc.syscall(
        SYS_MOUNT_SETATTR, AT_FDCWD, path.encode(), flags, ctypes.byref(attr), ctypes.sizeof(attr)
    )
    _check(result, f"mount_setattr {path}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _map_self(uid: int, gid: int) -> None:
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _files(spec: dict[str, object]) -> None:
    """Everything read-only but the sandbox and the hidden folders' stand-ins; the reveals read-only."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    hide: dict[str, str] = spec["hide"]  # type: ignore[assignment]
    writable: list[str] = spec["writable"]  # type: ignore[assignment]
    reveal: list[str] = spec["reveal"]  # type: ignore[assignment]
    # Held open before anything is hidden: a path under a hidden folder is bound from here.
    held = {
        path: os.open(path, os.O_PATH | os.O_CLOEXEC) for path in [*writable, *reveal] if os.path.exists(path)
    }
    # A stand-in may itself be under a hidden folder (a sandbox in /tmp): held open too.
    stand_ins = {target: os.open(hide[target], os.O_PATH | os.O_CLOEXEC) for target in hide}
    hidden = [target for target in sorted(hide, key=len) if os.path.isdir(target)]
    for target in hidden:
        # A hidden folder inside another (a home in /tmp) gets its mount point in the other's stand-in.
        os.makedirs(target, exist_ok=True)
        _mount(f"/proc/self/fd/{stand_ins[target]}", target, None, MS_BIND | MS_REC)
    for fd in stand_ins.values():
        os.close(fd)
    for path in [*reveal, *writable]:
        if path not in held:
            continue
        if not os.path.exists(path):
            # Under a hidden folder: its stand-in is writable, so the mount point can be made there.
            if os.path.isdir(f"/proc/self/fd/{held[path]}"):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        _mount(f"/proc/self/fd/{held[path]}", path, None, MS_BIND | MS_REC)
    for fd in held.values():
        os.close(fd)
    _setattr("/", set_=MOUNT_ATTR_RDONLY, recursive=True)
    for path in [*hidden, *writable]:
        if os.path.exists(path):
            _setattr(path, clear=MOUNT_ATTR_RDONLY)
    for path in reveal:
        if path in held and os.path.exists(path):
            # A reveal below a writable folder stays read-only.
            _setattr(path, set_=MOUNT_ATTR_RDONLY, recursive=True)


def _kernel_views(net: bool) -> None:
    # This PID namespace's processes, and (in a network namespace) this namespace's interfaces.
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    if net:
        try:
            _mount("sysfs", "/sys", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
        except Refused:
            # A network namespace joined (not ours): /sys would show the harness's interfaces, so
            # their folder is emptied; /proc/net shows the joined namespace's.
            with contextlib.suppress(Refused):
                _mount("tmpfs", "/sys/class/net", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)


def _init(spec: dict[str, object], argv: list[str], ready: int | None) -> int:
    """PID 1 of the namespace: set up, fork the target, pass signals on, exit with its status."""
    net = bool(spec.get("net"))
    _files(spec)
    _kernel_views(net or bool(spec.get("join")))
    if net:
        _loopback_up()
    uid, gid = os.geteuid(), os.getegid()
    if ready is not None:
        os.write(ready, b"ok\n")
        return 0
    child = os.fork()
    if child == 0:
        try:
            os.chdir(os.getcwd())
            # Nested: the target holds no capability over the mounts made above (they are locked).
            _check(_libc.unshare(CLONE_NEWUSER), "unshare(user) for the target")
            _map_self(uid, gid)
            _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            os.execv(_which(argv[0]), argv)
        except BaseException as exc:
            print(f"confine: cannot start {argv[0]!r}: {exc}", file=sys.stderr, flush=True)
            os._exit(127)
    code = _wait_for(child)
    if code != 0:
        # The harness reads it from the target's stderr: the SDK that started us keeps our status.
        print(f"{EXITED}{code}", file=sys.stderr, flush=True)
    return code


def _which(program: str) -> str:
    if "/" in program:
        return program
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return program


def _wait_for(child: int) -> int:
    def forward(sig: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, sig)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 1
        except InterruptedError:
            continue
        if pid == child:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def _join(holder: int) -> None:
    """Into the network namespace of the run's holder (and its user namespace, which owns it)."""
    for kind, flag in (("user", CLONE_NEWUSER), ("net", CLONE_NEWNET)):
        fd = os.open(f"/proc/{holder}/ns/{kind}", os.O_RDONLY | os.O_CLOEXEC)
        try:
            _check(_libc.setns(fd, flag), f"setns({kind}) into the run's network namespace")
        finally:
            os.close(fd)


def main(args: list[str]) -> int:
    mode, spec = args[0], json.loads(args[1])
    argv = args[3:] if mode == "run" else []
    if mode == "run" and (len(args) < 4 or args[2] != "--"):
        print("confine: usage: confine_main.py run SPEC -- ARGV...", file=sys.stderr)
        return 2
    try:
        # The harness (whichever of its threads started us): when it is gone, so is everything here.
        harness = os.pidfd_open(int(spec["harness"]))
    except (KeyError, ValueError, OSError):
        print("confine: the harness that started this target is gone", file=sys.stderr, flush=True)
        return 125
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | (CLONE_NEWNET if spec.get("net") else 0)
    read_end, write_end = os.pipe()
    try:
        if spec.get("join"):
            _join(int(spec["join"]))
        _check(_libc.unshare(flags), "unshare")
        _map_self(uid, gid)
    except (Refused, OSError) as exc:
        print(f"confine: {exc}", file=sys.stderr, flush=True)
        return 125
    init = os.fork()
    if init == 0:
        os.close(read_end)
        os.close(harness)
        try:
            # The init dies with this process (the harness's child), and everything in the namespace with it.
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            code = _init(spec, argv, write_end if mode == "probe" else None)
        except (Refused, OSError) as exc:
            print(f"confine: {exc}", file=sys.stderr, flush=True)
            code = 125
        os._exit(code)
    os.close(write_end)
    code = _outer_wait(init, harness)
    if mode == "probe":
        said = os.read(read_end, 16)
        print("ok" if said == b"ok\n" and code == 0 else "refused", flush=True)
    return code


def _hold_namespace() -> None:
    """This process into a user and network namespace of its own, loopback up (the holder's child)."""
    uid, gid = os.geteuid(), os.getegid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNET), "unshare(user, net)")
    _map_self(uid, gid)
    _loopback_up()
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _outer_wait(init: int, harness: int) -> int:
    """Wait for the init, passing signals on; kill it at once if the harness is gone."""
    import select

    watched = os.pidfd_open(init)

    def forward(sig: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(init, sig)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    while True:
        ready, _, _ = select.select([watched, harness], [], [])
        if harness in ready and watched not in ready:
            os.kill(init, signal.SIGKILL)
        if watched in ready or harness in ready:
            _, status = os.waitpid(init, 0)
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
