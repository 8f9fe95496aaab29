"""Asking the person at the server's controlling terminal, never on stdin (stdin is the protocol)."""

from __future__ import annotations

import io
import os
import select
import termios

# How what was typed before the question is thrown away: the terminal's input queue flushed
# (termios.tcflush), or drained by reading every line already waiting.
DISCARDS = ("flush", "drain")


def ask_terminal(prompt: str, timeout: float, *, discard: str | None = "flush") -> bool | None:
    """Ask on /dev/tty: the answer, or None with no terminal or no answer in time.

    Only a line typed once the prompt is shown answers it: what was typed before is thrown away first
    (`discard`, one of DISCARDS). With None, a `y` typed ahead (twice for an earlier question, or
    pasted) is the first line waiting in the terminal's input, and approves this question unread.
    """
    try:
        raw = open("/dev/tty", "r+b", buffering=0)  # noqa: SIM115
    except OSError:
        return None
    with io.TextIOWrapper(raw) as tty:
        if discard == "flush":
            termios.tcflush(raw.fileno(), termios.TCIFLUSH)
        elif discard == "drain":
            while select.select([raw], [], [], 0)[0]:
                if not os.read(raw.fileno(), 4096):
                    break
        tty.write(prompt)
        tty.flush()
        ready, _, _ = select.select([tty], [], [], timeout)
        if not ready:
            tty.write("\n(timed out, denied)\n")
            return None
        return tty.readline().strip().lower() == "y"
