"""Asking the person at the server's controlling terminal, never on stdin (stdin is the protocol)."""

from __future__ import annotations

import io
import select


def ask_terminal(prompt: str, timeout: float) -> bool | None:
    """Ask on /dev/tty: the answer, or None with no terminal or no answer in time."""
    try:
        tty = io.TextIOWrapper(open("/dev/tty", "r+b", buffering=0))  # noqa: SIM115
    except OSError:
        return None
    with tty:
        tty.write(prompt)
        tty.flush()
        ready, _, _ = select.select([tty], [], [], timeout)
        if not ready:
            tty.write("\n(timed out, denied)\n")
            return None
        return tty.readline().strip().lower() == "y"
