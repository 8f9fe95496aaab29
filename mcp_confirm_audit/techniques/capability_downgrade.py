"""`capability-downgrade`: the same action from a client that declares no elicitation (or URL mode only).

MRTR: a server MUST NOT send an input request the client has not declared,
and MUST answer -32021 instead. Acting without a question is vulnerable. A
form sent anyway is answered "accept" on that very connection, as the agent
behind a client that cannot reach a human would: if the file then goes, the
confirmation was completed by a party that said no human could be asked
(vulnerable, and seen on disk); if it does not, the MUST NOT is still broken
(weak). A fallback to a token or pending flow is completed by the agent: the
same action asks a human on the path the caller avoided (vulnerable).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations import HumanFailed, as_flow
from ..confirmations.detect import from_response
from ..models import Outcome, Verdict
from . import technique
from ._flows import AttackChannel, tool_info
from .base import Attack


@technique("capability-downgrade")
async def capability_downgrade(attack: Attack, params: Mapping[str, Any]) -> None:
    declared = params["declares"]
    if as_flow(attack.plan.mechanism) is not None:
        attack.not_applicable("the tool never sends an input request; self-approval judges its flow")
        return
    conn = await attack.peer(lambda: attack.peers.declaring(declared))
    if conn is None:
        return
    victim = attack.victim
    what = "no elicitation" if declared == "none" else "URL-mode elicitation only"
    await attack.start_attack()
    first = await attack.call(f"call from a client declaring {what}", victim, connection=conn)
    forms = [q for q in first.questions if q.schema is not None or declared == "none"]
    if first.outcome is Outcome.INPUT_REQUIRED and forms:
        attack.effect_means(
            Verdict.VULNERABLE,
            f"sent a form to a client that declared {what} (MUST NOT), and acted on that client's answer",
        )
        await attack.call(
            "accept, on the client that cannot ask anyone",
            victim,
            state=first.request_state,
            responses=attack.accept(first, victim),
            connection=conn,
        )
        attack.finding(Verdict.WEAK, f"sent an input request to a client that declared {what} (MUST NOT)")
        return
    info = tool_info(attack)
    flow = as_flow(from_response(first, info, attack.tools)) if info is not None else None
    if flow is not None and first.outcome is Outcome.COMPLETE:
        attack.effect_means(
            Verdict.VULNERABLE,
            f"without elicitation the tool fell back to a {flow.kind} flow the agent completed; "
            "clients that can be asked are asked",
        )
        channel = AttackChannel(attack, conn)
        shown = await flow.preview(channel, attack.arguments(victim))
        try:
            await flow.confirm(channel, attack.arguments(victim), shown.handle, as_agent=True)
        except HumanFailed as exc:
            attack.note(f"the fallback cannot be completed by the agent: {exc}")
