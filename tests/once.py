"""A costly run made once for the whole test run, not once per xdist worker.

A session fixture runs once in each worker that runs one of its tests; under `-n 4 --dist worksteal` the
tests of one file are often spread over several workers, and each made the same fleet run, the same audit.
`once()` makes it in the first worker that asks, under a lock in the folder every worker of the run shares
(the parent of each worker's base temporary folder, as pytest-xdist's documentation does it); the others wait
for it and read what it left. Without xdist it is a plain folder of the session.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

DONE = ".made"


def once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder `make(folder)` filled, made by one worker of the run and read by all of them.

    A `make` that raises leaves nothing behind: the next worker that asks tries again, and fails in its own
    test the same way.
    """
    shared = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    folder = shared / f"once-{name}"
    with (shared / f"once-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / DONE).exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / DONE).touch()
    return folder
