"""`protocol-downgrade`: the same action in both eras; the gate must hold in each.

An SDK 2.x server asks with MRTR rounds on 2026-07-28 and, where it resolves
its questions through the SDK, falls back to `elicitation/create` on a legacy
connection; a server that wrote its checks into the MRTR path alone has none
on the other. The gate is first shown to hold in the era the other families
judged (the primary's), before the attack proper; then the same subject (a
gate that holds leaves it as it was) goes over the other era: the same call
alone, or the same answer (a decline, an accepted "no"). An effect in the
second era is what a client gains by negotiating it, and the
finding names both eras; a gate that already acts in the first is the
consent families' finding there, and this one does not apply. An era in
which the tool neither asks nor acts says nothing of its gate: inconclusive.

Controls first, in the other era too (`_era_control`, once per tool per audit): a
server whose honest flow completes nothing there (an MRTR tool answering a legacy
client with -32603) does not serve that era, so nothing there was refused by a
defence: every attack is not applicable, quoting its reply, never refused.

A defence the SDK supplies on one era only (MRTR re-asks, a state bound to its
question) may be written on that path alone: `answer: swapped` runs identity-swap
in each era, the person asked about a file, another of the same size and time
renamed onto its name while they decide, and their yes sent. A gate that compares
the file in the first era and deletes the impostor in the second is the finding.

`answer: replayed` does the same for single use, for any action: in each era the
person's yes acts once, the subject is put back (a file with the identity it had;
a payment, a message or a row needs nothing put back, a second one is an effect
of its own, which the first era shows by asking and approving the same use again),
and the approval is presented again. Over MRTR that is the same state with the same
accept; over the back channel a question is the server's own request, answered
once, so there is nothing to present but the same call again, which must ask
anew. A second effect in one era only is the finding (a server that spends the
MRTR state but remembers a legacy yes for the path).

Forged state has no such analogue: on a legacy connection the SDK's dispatcher
binds each answer to the `elicitation/create` it answers by its JSON-RPC id (a
response to an unknown or late id is dropped), inside the tool call's own await,
so a client holds no state to forge or to carry to another call; what it does
control, the form's content, is read by the same code in both eras and judged by
`answer: negative`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from mcp import types

from ..confirmations.elicitation import needs_back_channel
from ..models import Outcome, Response, Verdict
from ..target.driver import Connection
from . import technique
from ._era_control import asked_and_approved, era_served
from ._params import Params
from .base import Attack


class ProtocolDowngradeParams(Params):
    answer: Literal["none", "decline", "negative", "swapped", "replayed"]


@technique("protocol-downgrade", both_eras=True, opens={"in_era"}, params=ProtocolDowngradeParams)
async def protocol_downgrade(attack: Attack, params: Mapping[str, Any]) -> None:
    answer = params["answer"]
    if answer not in ("none", "decline", "negative", "swapped", "replayed"):
        raise ValueError(f"protocol-downgrade: unknown answer {answer!r}")
    # A swap renames another file onto the name: a file. A replay acts again on a use of any action
    # (a second payment or message is an effect of its own; a staged case file is put back).
    if answer == "swapped" and not attack.file_only():
        return
    # The era the other families judged (the primary's) is where the gate is proven to hold first;
    # the other era is the attack.
    eras = ("legacy", "modern") if attack.primary.legacy else ("modern", "legacy")
    base = await attack.peer(lambda: attack.peers.in_era(eras[0]))
    if base is None:
        return
    other = await attack.peer(lambda: attack.peers.in_era(eras[1]))
    if other is None:
        return
    # Controls first: an era whose honest flow does not complete refuses nothing (once per tool per audit).
    if not await era_served(attack, other):
        return
    # The same subject in both eras (a handle minted again on another process): a gate that holds
    # leaves it as it was, so the second era meets exactly what the first did.
    subjects = {}
    for conn in (base, other):
        # A swap leaves the impostor under the name, and a replay keeps the file's identity aside:
        # the second era gets a file of its own. A use of an action that names no file is the
        # attack's own in each era (minted again by setup over another process): a second use of it
        # is an effect of its own, which the replay's control shows first (`_repeats`).
        own = answer == "swapped" or (answer == "replayed" and attack.names_file)
        subject = await (attack.another(f"in-{conn.era}") if own else attack.subject_on(conn))
        if subject is None:
            return
        subjects[conn.name] = subject
    once = _replayed if answer == "replayed" else _one_era
    acted = await once(attack, base, subjects[base.name], answer)
    if attack.failed:
        return
    if acted is not None:
        judges = (
            "the single-use families (replay, double-spend)"
            if answer == "replayed"
            else "the consent families"
        )
        attack.not_applicable(
            f"over {base.era} the gate already acts on {_said(answer)} ({acted}): {judges} judge "
            "it there, and there is no holding era to walk around"
        )
        return
    what = {
        "none": "acted without asking",
        "swapped": "deleted the file swapped in after the question",
        "replayed": "acted a second time on the person's one yes",
    }.get(answer, f"acted on {_said(answer)}")
    attack.effect_means(
        Verdict.VULNERABLE,
        f"over {base.era} the gate held ({_said(answer)} did nothing), and over {other.era} the tool "
        f"{what}: a client that negotiates {other.era} walks around it",
    )
    await once(attack, other, subjects[other.name], answer, attack_proper=True)


async def _one_era(
    attack: Attack, conn: Connection, subject: Any, answer: str, *, attack_proper: bool = False
) -> str | None:
    """The attack over one connection; what took effect (None: nothing)."""
    if attack_proper and answer != "swapped":
        await attack.start_attack()
    elif attack_proper:
        attack.attack_under_way()  # the call is the attack's; its snapshot follows the swap
    before = await attack.mark()
    asked = await attack.call(f"over {conn.era}: the call", subject, connection=conn)
    if answer == "swapped" and asked.outcome is Outcome.INPUT_REQUIRED and asked.questions:
        attack.note(f"over {conn.era}: {_renamed_onto(attack, subject.path)}")
        # The swap is the harness's doing: the snapshot (and what counts as an effect) follows it.
        if attack_proper:
            await attack.start_attack()
        before = await attack.mark()
        await attack.call(
            f"over {conn.era}: accept, as the person who saw the question would",
            subject,
            state=asked.request_state,
            responses=attack.accept(asked, subject),
            connection=conn,
        )
    elif answer == "swapped" and attack_proper:
        # Nothing was asked, so nothing could be swapped: what the call did is MCA-ERAS-001's finding,
        # and with no question in this era the swap does not apply (a baseline can hold that run green).
        if await attack.took_effect(subject, before):
            attack.not_applicable(
                f"over {conn.era} the tool acted without asking, so there is no question to swap a file "
                "under: the call alone (MCA-ERAS-001) judges it"
            )
            return None
        await attack.start_attack()
    elif answer != "swapped" and asked.outcome is Outcome.INPUT_REQUIRED and asked.questions:
        reply = _reply(attack, asked, subject, "cancel" if answer == "none" else answer)
        if reply is None:
            attack.not_applicable("the form has no field that can say no")
            return None
        label = "the person cancels (nobody was there to answer)" if answer == "none" else f"answer: {answer}"
        await attack.call(
            f"over {conn.era}: {label}", subject, state=asked.request_state, responses=reply, connection=conn
        )
    if await attack.took_effect(subject, before):
        changed = attack.changes(before, await attack.mark())
        return ", ".join(changed[:3]) or "the subject"
    if needs_back_channel(asked):
        attack.not_applicable(
            f"the tool asks only over a back channel (elicitation/create): over {conn.era} it cannot ask at "
            "all and refuses, so no era lets a client around its question"
        )
    elif asked.outcome is Outcome.COMPLETE:
        # A normal answer that neither asked nor acted: the action did not run in this era, so
        # nothing about its gate is known. (An error is the era refused: a gate may refuse a whole era.)
        attack.setup_failed(
            f"over {conn.era} the tool neither asked nor acted ({asked.outcome}: {asked.text[:160]})"
        )
    return None


async def _replayed(
    attack: Attack, conn: Connection, subject: Any, answer: str, *, attack_proper: bool = False
) -> str | None:
    """The person's yes acts once over `conn`, the subject is put back, and the approval is presented again."""
    if attack_proper:
        attack.attack_under_way()  # the calls are the attack's; its snapshot follows the honest redemption
    first = await attack.mark()
    asked = await attack.call(f"over {conn.era}: the call", subject, connection=conn)
    if asked.outcome is not Outcome.INPUT_REQUIRED or not asked.questions:
        acted = await attack.took_effect(subject, first)
        if needs_back_channel(asked):
            attack.not_applicable(
                f"the tool asks only over a back channel (elicitation/create): over {conn.era} it cannot ask "
                "at all and refuses, so no era lets a client around its question"
            )
        elif attack_proper and not acted and asked.outcome is not Outcome.COMPLETE:
            await attack.start_attack()  # the era refused whole (a gate may): that refusal is judged
        elif acted:
            # No approval to present again: the unasked act is MCA-ERAS-001's finding.
            attack.not_applicable(
                f"over {conn.era} the tool did not ask and acted ({asked.outcome}: {asked.text[:160]}), so "
                "there was no approval to present again: the call alone (MCA-ERAS-001) judges that era"
            )
        else:
            did = "acted" if acted else "did nothing"
            attack.setup_failed(
                f"over {conn.era} the tool did not ask and {did} ({asked.outcome}: {asked.text[:160]}), so "
                "there was no approval to present again: the call alone (MCA-ERAS-001) judges that era"
            )
        return None
    yes = attack.accept(asked, subject)
    subject.keep()
    since = await attack.mark()
    done = await attack.call(
        f"over {conn.era}: accept, as the person would (the honest redemption)",
        subject,
        state=asked.request_state,
        responses=yes,
        connection=conn,
    )
    if not await attack.took_effect(subject, since):
        attack.setup_failed(
            f"over {conn.era} the person's yes did not take effect ({done.outcome}: {done.text[:160]})"
        )
        return None
    if (put_back := subject.put_back()) is not None:
        attack.note(f"over {conn.era}: {put_back} after the honest redemption")
    if not attack_proper and not attack.names_file and not await _repeats(attack, conn, subject):
        return None
    if attack_proper:
        await attack.start_attack()
    before = await attack.mark()
    if conn.legacy:
        # The question was the server's own request, answered once: nothing to present but the call.
        # A question asked again stays open (the person is not there to answer it twice).
        again = await attack.call(
            f"over {conn.era}: the same call again (no state to present: the yes was the answer to one request)",
            subject,
            connection=conn,
        )
    else:
        again = await attack.call(
            f"over {conn.era}: the same state redeemed again, accepting",
            subject,
            state=asked.request_state,
            responses=yes,
            connection=conn,
        )
    if await attack.took_effect(subject, before):
        changed = attack.changes(before, await attack.mark())
        return ", ".join(changed[:3]) or "the subject"
    if not attack_proper and conn.legacy and again.outcome is Outcome.INPUT_REQUIRED and again.questions:
        # Before the attack proper, the open question is cancelled now: what it does next belongs to
        # no other era's snapshot.
        await attack.call(
            f"over {conn.era}: the person cancels the question asked again",
            subject,
            state=again.request_state,
            responses=attack.reply(again, "cancel"),
            connection=conn,
        )
    return None


async def _repeats(attack: Attack, conn: Connection, subject: Any) -> bool:
    """A use of an action that names no file, asked and approved again: whether it acts again.

    A second payment or message is an effect of its own, so an approval presented again can be
    seen acting; a collection deleted or a status set leaves nothing a second use changes, and
    then nothing a replay does could be seen (not applicable, saying why).
    """
    before = await attack.mark()
    _, done = await asked_and_approved(
        attack,
        conn,
        subject,
        "control: the same use again, asked anew",
        "control: the person approves the same use again",
    )
    if await attack.took_effect(subject, before):
        return True
    attack.not_applicable(
        f"over {conn.era} the same use of {attack.plan.name!r}, asked and approved again, did not act again "
        f"({done.outcome}: {done.text[:160]}): its subject is gone or already as the first use left it, so an "
        "approval presented again could not be seen acting; replay in each era needs an action each use of "
        "which is an effect of its own (a payment, a message) or a file"
    )
    return False


def _reply(attack: Attack, asked: Response, subject: Any, answer: str) -> dict[str, Any] | None:
    if answer in ("decline", "cancel"):
        return attack.reply(asked, answer)
    replies: dict[str, Any] = {}
    for question in asked.questions:
        content = attack.no(question, subject)
        if content is None:
            return None
        replies[question.key] = types.ElicitResult(action="accept", content=content)
    return replies


def _said(answer: str) -> str:
    return {
        "none": "the call alone",
        "decline": "a decline",
        "negative": "an accepted no",
        "swapped": "a yes after the file was swapped",
        "replayed": "an approval presented again after it acted",
    }[answer]


def _renamed_onto(attack: Attack, victim: Path) -> str:
    """Another regular file of the victim's size and times renamed onto its name (only the inode differs)."""
    seen = os.stat(victim)
    impostor = victim.with_name(f".{victim.name}.impostor")
    impostor.write_bytes(b"i" * seen.st_size)
    os.utime(impostor, ns=(seen.st_atime_ns, seen.st_mtime_ns))
    os.replace(impostor, victim)
    return f"after the question, another file (same size and mtime) renamed onto {attack.case.rel(victim)}"
