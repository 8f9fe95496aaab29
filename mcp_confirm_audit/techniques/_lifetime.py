"""The in-time control of the families that go past a lifetime (expiry, approval-expiry, lapsed-request).

A control must take effect inside the lifetime to prove the flow works there. One that
came back later than the lifetime (a loaded machine, a slow person's step) proves nothing
either way, so it is tried again with another subject, up to `TRIES` times in all.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..confirmations import AgentFlow
from ..target.driver import Connection
from ._elsewhere import approved, redeem
from ._flows import AttackChannel
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


@dataclass(frozen=True, slots=True)
class InTime:
    """How one family words its in-time control in the transcript and in a failure."""

    label: str  # the control subject's label; later tries add "-2", "-3"
    redeemed: str  # what redeeming at once is, in the transcript ("lifetime Ns" is added)
    acted: str  # what did not take effect, in the failure
    steps: str  # the steps whose time is measured
    could: str  # what no try managed, in the final failure
    why: str  # why a try may be late


async def approved_in_time(
    attack: Attack, flow: AgentFlow, channel: AttackChannel, conn: Connection, ttl: float, words: InTime
) -> bool:
    """The control: an approval redeemed at once, inside the lifetime, acts in this process.

    A control that came back later than the lifetime proves nothing and is tried again with
    another subject. False when the control failed (the attack is then set up as failed).
    """
    for attempt in range(1, TRIES + 1):
        label = words.label if attempt == 1 else f"{words.label}-{attempt}"
        control = await attack.another(label, connection=conn)
        if control is None:
            return False
        control_args = attack.arguments(control)
        # From before the preview to after the redemption: the most the server can have seen pass.
        started = time.monotonic()
        got = await approved(attack, flow, channel, control_args)
        if got is None:
            return False
        before = await attack.mark()
        done = await redeem(flow, channel, control_args, *got, f"{words.redeemed} (lifetime {ttl:g}s)")
        took = time.monotonic() - started
        if await attack.took_effect(control, before):
            return True
        failure = f"{words.acted} did not take effect ({done.text[:160]})"
        if not try_again(attack, took, ttl, failure, words.steps):
            return False
    never_in_time(attack, ttl, words.could, words.why)
    return False
