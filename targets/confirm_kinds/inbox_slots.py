"""Where the inbox keeps a request staged under its subject: shared by the server's gate and approve_cli.py.

Apart from gates.py so the person's command imports only this: approve_cli.py runs once for every
name a person is shown (a matrix audit over a pending flow starts it a few hundred times), and the
gates' imports (dataclasses, secrets, hmac...) were half of each start's CPU.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def subject_slot(subject: str, generation: int) -> str:
    """Where a request staged under its subject is kept in the inbox: a subject is no file name."""
    digest = hashlib.sha256(subject.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"s-{digest}-{generation}"


def newest_slot(inbox: Path, subject: str) -> str | None:
    """The request last staged under `subject` (what the person is shown and decides); None if none."""
    prefix = subject_slot(subject, 0)[:-1]
    found = [p.stem for p in inbox.glob(f"{prefix}*.request") if p.stem[len(prefix) :].isdigit()]
    return max(found, key=lambda stem: int(stem[len(prefix) :]), default=None)
