"""The human's second channel: a command the harness runs as the person would.

Bounded like every round trip; run in the sandbox's root with `{root}`
substituted; its output is evidence, never trusted to mean anything.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import anyio

from .base import HumanFailed


async def run(command: str, root: Path, timeout: float) -> str:
    words = [word.replace("{root}", str(root)) for word in shlex.split(command)]
    if not words:
        raise HumanFailed("the human's command is empty")
    try:
        with anyio.fail_after(timeout):
            done = await anyio.run_process(words, cwd=root, check=False, stderr=subprocess.STDOUT)
    except TimeoutError:
        raise HumanFailed(f"the human's command did not finish within {timeout:g}s: {command}") from None
    except OSError as exc:
        raise HumanFailed(f"the human's command could not run ({exc}): {command}") from None
    said = done.stdout.decode(errors="replace").strip()[:300]
    if done.returncode != 0:
        raise HumanFailed(f"the human's command exited {done.returncode}: {said}")
    return said
