"""The run's shared network namespace and its relay: run as a script by the harness, never imported by it.

    PYTHON -I -S netns_main.py

A child of this process takes a user and a network namespace of its own (loopback only, brought up)
and holds them: every confined target that must meet the harness on loopback joins them
(confine_main.py's `join`), so the targets, the servers of a pair and the fakes they start share one
loopback, and nothing else. This process stays in the harness's network and relays between the two
loopbacks, on the ports the harness names on its standard input, one command a line:

    forward PORT   the harness's 127.0.0.1:PORT reaches the namespace's 127.0.0.1:PORT (an HTTP target)
    reverse PORT   the namespace's 127.0.0.1:PORT reaches the harness's 127.0.0.1:PORT (the sink, a fake)
    check PORT     "ok" when something in the namespace accepts on 127.0.0.1:PORT, else "no"
    close PORT     stop relaying PORT (either way)

Every port something listens on in the namespace is forwarded too, as it appears (a stdio target's
own approval page, whose link it sends to the sink): looked for before each connection from inside
is relayed out (so a page opened before its link was sent is reachable when the link arrives), and
every few tenths of a second.

It answers "ready PID" (the holder's pid, whose /proc/PID/ns/ the targets join) once, then one line a
command ("ok", "no" or "error: WHY"). It ends, and its holder with it, when its standard input closes:
when the harness is gone, even killed with SIGKILL.

A socket belongs to the network namespace it was made in, wherever it is used: the holder makes
the namespace's sockets and passes them here over a socket pair (SCM_RIGHTS).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import confine_main  # type: ignore[import-not-found]  # beside this script: the standard library only

LOOPBACK = "127.0.0.1"
CHUNK = 65536
# Seconds a relayed connection may take to be made on the other side.
CONNECT_TIMEOUT = 10.0
# Seconds between two looks for new listeners in the namespace.
LOOK_EVERY = 0.2
LISTEN = "0A"  # a socket's state in /proc/net/tcp
ANY_OR_LOOPBACK = ("0100007F", "00000000")


class Holder:
    """The child that holds the namespace, and makes its sockets on request."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            ours.close()
            code = 0
            try:
                confine_main._hold_namespace()
                theirs.sendall(b"r")
                _make_sockets(theirs)
            except BaseException as exc:  # the parent reads why from the pair
                with contextlib.suppress(OSError):
                    theirs.sendall(f"e{exc}".encode()[:500])
                code = 125
            os._exit(code)
        theirs.close()
        self.pid = pid
        self._pair = ours
        self._lock = threading.Lock()
        said = ours.recv(512)
        if said != b"r":
            raise OSError(said[1:].decode(errors="replace") or "the namespace's holder ended")

    def socket(self) -> socket.socket:
        """A new TCP socket in the namespace."""
        with self._lock:
            self._pair.sendall(b"s")
            _, fds, _, _ = socket.recv_fds(self._pair, 1, 1)
        if not fds:
            raise OSError("the namespace's holder ended")
        return socket.socket(fileno=fds[0])


def _make_sockets(pair: socket.socket) -> None:
    while pair.recv(1):
        made = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        socket.send_fds(pair, [b"s"], [made.fileno()])
        made.close()


def _pump(source: socket.socket, sink: socket.socket, done: threading.Barrier) -> None:
    try:
        while data := source.recv(CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
    # The second of the pair to finish closes both.
    with contextlib.suppress(threading.BrokenBarrierError):
        if done.wait() == 0:
            source.close()
            sink.close()


def _relay(accepted: socket.socket, dial: socket.socket, port: int) -> None:
    try:
        dial.settimeout(CONNECT_TIMEOUT)
        dial.connect((LOOPBACK, port))
        dial.settimeout(None)
        # Each piece goes on as it came: without TCP_NODELAY a message written in two pieces (uvicorn's
        # headers, then its body) waited for the delayed ACK of the first, 40 ms each way, and a round
        # trip to a confined HTTP target took 88 ms where a pipe takes 8.
        for relayed in (accepted, dial):
            relayed.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        accepted.close()
        dial.close()
        return
    done = threading.Barrier(2)
    for source, sink in ((accepted, dial), (dial, accepted)):
        threading.Thread(target=_pump, args=(source, sink, done), daemon=True).start()


class Relay:
    def __init__(self, holder: Holder) -> None:
        self.holder = holder
        self.listening: dict[int, socket.socket] = {}
        self.way: dict[int, str] = {}
        # Ports found listening inside that could not be forwarded (taken on the harness's side).
        self.unforwarded: set[int] = set()
        self.lock = threading.RLock()

    def command(self, line: str) -> str:
        with self.lock:
            return self._command(line)

    def look(self) -> None:
        """Forward every port something listens on inside, not yet relayed either way."""
        try:
            with open(f"/proc/{self.holder.pid}/net/tcp") as table:
                rows = [line.split() for line in table.readlines()[1:]]
        except OSError:
            return
        ports = {
            int(local.partition(":")[2], 16)
            for local, state in ((row[1], row[3]) for row in rows if len(row) > 3)
            if state == LISTEN and local.partition(":")[0] in ANY_OR_LOOPBACK
        }
        with self.lock:
            for port in sorted(ports - set(self.listening) - self.unforwarded):
                if self._command(f"forward {port}") != "ok":
                    self.unforwarded.add(port)
            # A port no longer listened on inside may be forwarded again when it is.
            self.unforwarded &= ports

    def keep_looking(self) -> None:
        while True:
            time.sleep(LOOK_EVERY)
            self.look()

    def _command(self, line: str) -> str:
        verb, _, word = line.partition(" ")
        try:
            port = int(word)
        except ValueError:
            return f"error: not a port: {word!r}"
        if verb == "check":
            with self.holder.socket() as probe:
                probe.settimeout(CONNECT_TIMEOUT)
                return "ok" if probe.connect_ex((LOOPBACK, port)) == 0 else "no"
        if verb == "close":
            listener = self.listening.pop(port, None)
            self.way.pop(port, None)
            if listener is not None:
                with contextlib.suppress(OSError):
                    listener.shutdown(socket.SHUT_RDWR)
                listener.close()
            return "ok"
        if verb in ("forward", "reverse") and self.way.get(port) == verb:
            return "ok"  # already relayed that way
        if verb not in ("forward", "reverse") or port in self.listening:
            return f"error: cannot {verb} {port}"
        # forward: listen here, dial in the namespace; reverse: listen in the namespace, dial here.
        listener = socket.socket() if verb == "forward" else self.holder.socket()
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((LOOPBACK, port))
            listener.listen(64)
        except OSError as exc:
            listener.close()
            return f"error: {exc.strerror or exc}"
        self.listening[port] = listener
        self.way[port] = verb
        dial = self.holder.socket if verb == "forward" else socket.socket
        threading.Thread(target=self._accept, args=(listener, dial, port), daemon=True).start()
        return "ok"

    def _accept(self, listener: socket.socket, dial: object, port: int) -> None:
        outward = dial is socket.socket
        while True:
            try:
                accepted, _ = listener.accept()
                if outward:
                    # Whatever the target listens on before it speaks out is reachable when it has.
                    self.look()
                _relay(accepted, dial(), port)  # type: ignore[operator]
            except OSError:
                return


def main() -> int:
    try:
        holder = Holder()
    except (OSError, confine_main.Refused) as exc:
        print(f"error: {exc}", flush=True)
        return 125
    relay = Relay(holder)
    threading.Thread(target=relay.keep_looking, daemon=True).start()
    print(f"ready {holder.pid}", flush=True)
    for line in sys.stdin:
        print(relay.command(line.strip()), flush=True)
    # The harness is gone (or done): the holder and every relayed connection go with this process.
    with contextlib.suppress(ProcessLookupError):
        os.kill(holder.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(holder.pid, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
