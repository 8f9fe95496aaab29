"""A Python target's zygote: its modules imported once, then one fresh process forked per world.

Run as a script by an interpreter, never imported by the harness (the standard library only,
so it runs in the target's own environment, which need not have this package):

    PYTHON zygote_main.py serve SOCKET MODULE...   import each MODULE, then fork a child per request
    PYTHON -I -S zygote_main.py relay SOCKET ARGV...   what the harness's launcher starts as the target

The relay is the process the launcher starts and watches: it has the target's stdin, stdout,
stderr, environment (the reaper's marker included) and working directory (the world's root).
It hands all of them to the zygote with ARGV (the target's command after its interpreter:
`SCRIPT ARGS...` or `-m MODULE ARGS...`), and the zygote forks: the child takes them over,
starts a session of its own and runs ARGV as `python ARGV` would, its modules already imported.
The relay then waits, and exits with the child's status. If the relay dies first (the launcher
killed it), the zygote kills the child's process group; when the zygote is told to stop, or the
harness that started it is gone (its stdin, a pipe the harness holds, reads end of file), it kills
every child it forked and exits: a harness killed outright leaves no zygote behind.

The child is given its world's marker in the environment that /proc shows (`_show_marker`): a
fork keeps its parent's, so without that the reaper would see only the zygote's marker on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import sys
import traceback

MARKER = "MCP_AUDIT_PROCESS"
# Started with this variable (a value of spaces), the zygote leaves room in the environment block
# /proc shows: each child writes its own world's marker over it.
SLOT = "MCP_AUDIT_MARKER_SLOT"
SLOT_SIZE = 240
_HEADER = struct.Struct("!I")


def serve(path: str, modules: list[str]) -> None:
    # Not the folder of this script: the target's imports must not find the harness's modules.
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.realpath(entry or ".") != here]
    for module in modules:
        __import__(module)
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(path)
    listening.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, _stop)
    children: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listening, selectors.EVENT_READ, "accept")
    selector.register(wake_read, selectors.EVENT_READ, "reap")
    # Nothing is ever written to stdin: it becomes readable when the harness holding it is gone.
    selector.register(0, selectors.EVENT_READ, "parent")
    # Ready: the harness reads this line, then stdout is no longer ours.
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.close(null)
    try:
        while True:
            for key, _ in selector.select():
                if key.data == "accept":
                    conn, _ = listening.accept()
                    spawned = _spawn(conn, (listening, selector, wake_read, wake_write, *children.values()))
                    if spawned is None:
                        conn.close()
                        continue
                    try:
                        conn.sendall(f"pid {spawned}\n".encode())
                    except OSError:
                        # Its relay is gone already (killed between sending the request and this reply):
                        # its child goes with it, as below. Raised, it ended this loop, and with it the
                        # zygote and every child it forked, and reset the relays still waiting to be heard.
                        _kill_group(spawned)
                        conn.close()
                        continue
                    children[spawned] = conn
                    selector.register(conn, selectors.EVENT_READ, spawned)
                elif key.data == "parent":
                    return
                elif key.data == "reap":
                    _drain(wake_read)
                    _reap(children, selector)
                else:
                    # The relay hung up (it is gone, or was killed): its child goes with it.
                    pid = key.data
                    _kill_group(pid)
                    selector.unregister(key.fileobj)
                    children.pop(pid, None)
                    key.fileobj.close()  # type: ignore[union-attr]
    finally:
        for pid in children:
            _kill_group(pid)


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        return


def _stop(*_: object) -> None:
    raise SystemExit(0)


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)


def _reap(children: dict[int, socket.socket], selector: selectors.BaseSelector) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is None:
            continue
        selector.unregister(conn)
        with contextlib.suppress(OSError):
            conn.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
        conn.close()


def _receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    """One request: a length, the three descriptors, then the JSON of argv, env and cwd."""
    data, fds, _, _ = socket.recv_fds(conn, _HEADER.size, 3)
    while len(data) < _HEADER.size:
        more = conn.recv(_HEADER.size - len(data))
        if not more:
            raise EOFError("the relay hung up")
        data += more
    (size,) = _HEADER.unpack(data)
    body = b""
    while len(body) < size:
        more = conn.recv(size - len(body))
        if not more:
            raise EOFError("the relay hung up")
        body += more
    return json.loads(body), fds


def _spawn(conn: socket.socket, close_in_child: tuple[object, ...]) -> int | None:
    try:
        request, fds = _receive(conn)
    except (OSError, EOFError, ValueError):
        return None
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        return None
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    # The child: nothing of the zygote's but the modules it imported.
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        for thing in close_in_child:
            if isinstance(thing, int):
                os.close(thing)
            else:
                thing.close()  # type: ignore[attr-defined]
        conn.close()
        os.setsid()
        for number, fd in enumerate(fds):
            os.dup2(fd, number)
            os.close(fd)
        env = request["env"]
        assert isinstance(env, dict)
        _show_marker(str(env.get(MARKER, "")))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in env.items()})
        os.chdir(str(request["cwd"]))
        argv = request["argv"]
        assert isinstance(argv, list)
        code = _run([str(word) for word in argv])
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _run(argv: list[str]) -> int:
    """ARGV as `python ARGV` runs it: a script, or `-m MODULE`, as __main__."""
    try:
        if argv[0] == "-m":
            sys.argv = argv[1:]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            sys.path.insert(0, os.path.dirname(os.path.realpath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        return _exit_code(exc)
    return 0


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _show_marker(token: str) -> None:
    """Write `MARKER=token` over the slot in the environment block /proc/self/environ shows.

    Best effort (Linux only): the relay carries the same marker, and the child works in its
    world's root, so the reaper finds it by its directory too.
    """
    if not token:
        return
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        # Fields 50 and 51 of stat(5), counted from the state (field 3).
        start = int(fields[47])
        with open("/proc/self/environ", "rb") as environ:
            block = environ.read()
        slot = f"{SLOT}=".encode()
        at = block.find(slot)
        entry = f"{MARKER}={token}".encode()
        size = len(slot) + SLOT_SIZE
        if start == 0 or at < 0 or (at and block[at - 1] != 0) or len(entry) > size:
            return
        import ctypes

        ctypes.memmove(start + at, entry + b"\0" * (size - len(entry)), size)
    except (OSError, IndexError, ValueError):
        return


def relay(path: str, argv: list[str]) -> None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    body = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
    socket.send_fds(conn, [_HEADER.pack(len(body))], [0, 1, 2])
    conn.sendall(body)
    # The child has them now: the relay keeps none open (EOF on stdout is the child's to give).
    null = os.open(os.devnull, os.O_RDWR)
    for number in (0, 1):
        os.dup2(null, number)
    reader = conn.makefile("r")
    code = 1
    for line in reader:
        word, _, value = line.partition(" ")
        if word == "exit":
            code = int(value)
            break
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        code = 128 - code
    os._exit(code)


def main() -> None:
    mode, path, *rest = sys.argv[1:]
    if mode == "serve":
        serve(path, rest)
    elif mode == "relay":
        relay(path, rest)
    else:
        raise SystemExit(f"zygote_main: unknown mode {mode!r}")


if __name__ == "__main__":
    main()
