"""`expiry`: an answer that comes back after the confirmation's lifetime.

A confirmation is a promise about one moment: the file the user saw, then. The
SDK's seal expires with its TTL; a state a server signs itself, or a ledger
entry, must expire too. Only when the profile says how to shorten the
lifetime (`ttl_flag`) can this be tested without waiting minutes: a process
with that lifetime is started, an honest answer inside it proves the flow
works there, and then an answer after it must be refused. It waits by nature:
one attack, the shortest lifetime the profile declares.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from . import technique
from ._lifetime import TRIES, never_in_time, try_again
from .base import Attack

# Past the lifetime by this much (and by half the lifetime), so a clock read a
# little early on either side cannot make a late answer look timely.
_MARGIN = 0.3


@technique(
    "expiry",
    mechanisms={"mrtr"},
    needs_state=(
        "a legacy question carries no requestState whose lifetime could lapse; the never-answers "
        "family judges how long the server waits for the person"
    ),
    waits_lifetime=True,
    opens={"short_lived"},
)
async def expiry(attack: Attack, params: Mapping[str, Any]) -> None:
    found = await attack.peer(attack.peers.short_lived)
    if found is None:
        return
    conn, ttl = found
    for attempt in range(1, TRIES + 1):
        label = "answered-in-time" if attempt == 1 else f"answered-in-time-{attempt}"
        control = await attack.another(label, connection=conn)
        if control is None:
            return
        before = await attack.mark()
        # From before the question to after the answer: the most the server can have seen pass.
        started = time.monotonic()
        asked = await attack.ask(
            control, connection=conn, label=f"control: ask on {conn.name} (lifetime {ttl:g}s)"
        )
        if attack.failed:
            return
        done = await attack.call(
            "control: answer at once",
            control,
            state=asked.request_state,
            responses=attack.accept(asked, control),
            connection=conn,
        )
        took = time.monotonic() - started
        if await attack.took_effect(control, before):
            break
        failure = f"an answer inside the lifetime did not take effect ({done.outcome}: {done.text})"
        if not try_again(attack, took, ttl, failure, "question and answer"):
            return
    else:
        never_in_time(attack, ttl, "control could be answered", "a slow or loaded machine")
        return
    victim = await attack.subject_on(conn)
    if victim is None:
        return
    first = await attack.ask(victim, connection=conn)
    if attack.failed:
        return
    late = ttl + max(_MARGIN, ttl / 2)
    await attack.wait_out(late)
    attack.note(f"answered {late:g}s after the question, past a lifetime of {ttl:g}s")
    await attack.start_attack()
    await attack.call(
        "answer after the lifetime",
        victim,
        state=first.request_state,
        responses=attack.accept(first, victim),
        connection=conn,
    )
