"""The honest flow over another era, run once per tool per audit before anything is judged there.

The session's approve control proves the honest flow in the primary's era only. A family
that drives the other era (`both_eras`) first asks the same of that one: a use of the action
of its own, called, asked and approved as the person would, and its effect seen. A server
that does not serve the era (its call there neither asks nor acts: an MRTR tool answering a
legacy connection with "Handler returned an invalid result") refused nothing: a downgrade has
nothing to reach, and the attack is not applicable, quoting the reply. One that asks there
but whose yes does not act cannot be judged there (inconclusive). The first attack to need it
runs it (its calls are that attack's setup); the others read what it found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..confirmations.elicitation import needs_back_channel
from ..engine.reading import quoted
from ..models import Outcome, Response

if TYPE_CHECKING:
    from ..target.driver import Connection
    from .base import Attack


@dataclass(frozen=True, slots=True)
class EraControl:
    """What the honest flow did over one era: passed, or why nothing can be judged there."""

    era: str
    passed: bool
    # Passed: what it did. Failed: the reason the attack ends with.
    said: str
    # Failed because the era is not served (not applicable), rather than not completed (inconclusive).
    unserved: bool
    # The attack whose setup ran it.
    by: str


async def era_served(attack: Attack, conn: Connection) -> bool:
    """Whether the honest flow completes over `conn`'s era; if not, the attack ends saying why."""
    known = attack.peers.era_controls.get(conn.era)
    if known is None:
        known = await _control(attack, conn)
        if known is None:
            return False  # the attack's own use could not be made: it says why
        attack.peers.era_controls[conn.era] = known
    else:
        attack.note(
            f"control over {conn.era}, run once for {attack.plan.name!r} (in {known.by}): "
            f"{known.said if known.passed else 'failed'}"
        )
    if known.passed:
        return True
    if known.unserved:
        attack.not_applicable(known.said)
    else:
        attack.setup_failed(known.said)
    return False


async def _control(attack: Attack, conn: Connection) -> EraControl | None:
    era = conn.era
    # A use of its own: another file, or the setup run again over that era's process (what it mints
    # is fresh there; its values as the profile gives them, which a server may accept and no others).
    fresh = attack.plan.setup and not attack.names_file and conn is not attack.primary
    subject = await (attack.subject_on(conn) if fresh else attack.another(f"control-{era}", connection=conn))
    if subject is None:
        return None
    before = await attack.mark()
    asked, done = await asked_and_approved(
        attack, conn, subject, "control: the honest call", "control: the person approves"
    )

    def ended(passed: bool, said: str, *, unserved: bool = False) -> EraControl:
        return EraControl(era, passed, said, unserved, attack.spec.id)

    if done is not asked:
        if await attack.took_effect(subject, before):
            return ended(True, "asked, approved, and acted")
        return ended(
            False,
            f"over {era} the tool asks, but the person's yes did not act ({done.outcome}: {quoted(done)}): "
            "nothing can be judged in that era",
        )
    if await attack.took_effect(subject, before):
        return ended(True, "acted without asking (the call alone, MCA-ERAS-001, judges that)")
    if needs_back_channel(asked):
        return ended(
            False,
            f"the tool asks only over a back channel (elicitation/create): over {era} it cannot ask at "
            "all and refuses, so no era lets a client around its question",
            unserved=True,
        )
    if asked.outcome is Outcome.TRANSPORT:
        return ended(False, f"over {era} the honest call got no answer ({quoted(asked)})")
    return ended(
        False,
        f"the target completes no honest flow over {era}: {quoted(asked)}; a downgrade has nothing to reach",
        unserved=True,
    )


async def asked_and_approved(
    attack: Attack, conn: Connection, subject: Any, calling: str, approving: str
) -> tuple[Response, Response]:
    """The call over `conn`'s era, and, when it asks, the person's yes: (the call's reply, the last reply)."""
    asked = await attack.call(f"over {conn.era}: {calling}", subject, connection=conn)
    if asked.outcome is not Outcome.INPUT_REQUIRED or not asked.questions:
        return asked, asked
    done = await attack.call(
        f"over {conn.era}: {approving}",
        subject,
        state=asked.request_state,
        responses=attack.accept(asked, subject),
        connection=conn,
    )
    return asked, done
