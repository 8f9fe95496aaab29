"""Every deadline a test sets, from one scale.

`MCA_DEADLINE_SCALE` (a positive number, 1 unless set) multiplies them all: a CI machine
that runs the suite beside other jobs raises it once, here, rather than each test growing
its own number. A deadline is a bound on how long a thing may take before the test gives
up, never what a test asserts: no test asserts a timing.
"""

from __future__ import annotations

import dataclasses
import os

from mcp_confirm_audit.profile.loader import Profile


def _scale() -> float:
    said = os.environ.get("MCA_DEADLINE_SCALE", "1")
    try:
        scale = float(said)
    except ValueError:
        scale = 0.0
    if not scale > 0:
        raise ValueError(f"MCA_DEADLINE_SCALE={said!r}: set it to a positive number, such as 1 or 2.5")
    return scale


SCALE = _scale()


def deadline(seconds: float) -> float:
    """`seconds` on a quiet machine, scaled for this one."""
    return seconds * SCALE


def scaled(profile: Profile) -> Profile:
    """`profile` with its round-trip and start deadlines scaled."""
    if SCALE == 1:
        return profile
    answer = profile.answer_deadline
    return dataclasses.replace(
        profile,
        call_timeout=deadline(profile.call_timeout),
        start_timeout=deadline(profile.start_timeout),
        answer_deadline=None if answer is None else deadline(answer),
    )
