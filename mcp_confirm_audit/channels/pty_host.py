"""Start a command with a given pseudo-terminal as its controlling terminal: `pty_host SLAVE -- ARGV...`.

The harness starts every target in a session of its own (so it never shares
the harness's terminal); this host, the session's leader, opens the terminal,
which makes it the session's controlling terminal, and execs the target in its
place: the target is the same process, with the same pid and environment.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import termios


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m mcp_confirm_audit.channels.pty_host SLAVE -- COMMAND...", file=sys.stderr)
        return 2
    slave, command = argv[0], argv[2:]
    with contextlib.suppress(PermissionError):
        os.setsid()  # else already a session's leader, as the harness starts it
    fd = os.open(slave, os.O_RDWR)
    with contextlib.suppress(OSError):
        fcntl.ioctl(fd, termios.TIOCSCTTY, 0)  # else opening it already made it the controlling terminal
    os.close(fd)
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"pty_host: cannot run {command[0]!r}: {exc}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
