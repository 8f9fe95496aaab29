"""The in-time control of the families that go past a lifetime (expiry, approval-expiry).

A control must take effect inside the lifetime to prove the flow works there. One that
came back later than the lifetime (a loaded machine, a slow person's step) proves nothing
either way, so it is tried again with another subject, up to `TRIES` times in all.
"""

from __future__ import annotations

from .base import Attack

TRIES = 3


def try_again(attack: Attack, took: float, ttl: float, failure: str, steps: str) -> bool:
    """After a control that did not take effect: whether to try again (it was late); if not, it failed."""
    if took < ttl:
        attack.setup_failed(failure)
        return False
    attack.note(
        f"the control's {steps} took {took:.1f}s, past the {ttl:g}s lifetime: proves nothing, tried again"
    )
    return True


def never_in_time(attack: Attack, ttl: float, what: str, why: str) -> None:
    """Every try was late: nothing is judged, and the profile is told how to give the controls time."""
    attack.setup_failed(
        f"no {what} inside the {ttl:g}s lifetime in {TRIES} tries ({why}): set a longer `ttl:` in the profile"
    )
