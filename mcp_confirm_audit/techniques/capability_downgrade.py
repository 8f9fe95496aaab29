"""`capability-downgrade`: the same action from a client that declares no elicitation (or URL mode only).

MRTR: a server MUST NOT send an input request the client has not declared,
and MUST answer -32021 instead. Acting without a question is vulnerable. A
form sent anyway is answered as that very client answers it, never "accept":
a client that declared no elicitation (or URL mode only) cannot show a form,
so over the back channel it replies with the error the SDK's own client sends
("Elicitation not supported"), and over MRTR it sends no second round at all
(the SDK's client raises before one). Sending the form is the MUST NOT broken
(weak, layer protocol); the action taking place afterwards, on no answer, is
vulnerable, and seen on disk. A fallback to a token or pending flow is
completed by the agent: the same action asks a human on the path the caller
avoided (vulnerable). The fallback may be a result that stages the action, or
a refusal that offers it ("call with dry_run, then confirm=<token>",
`detect.offered`): either is followed on the client that declared less, with
the agent's own calls only, since the offer may hold for that client alone. A
fallback that still needs a person's step (a pending id approved elsewhere) is
no finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from mcp import types
from pydantic import Field

from ..confirmations import HumanFailed, as_flow
from ..confirmations.detect import from_response, offered
from ..models import Layer, Outcome, Verdict
from . import ANY, technique
from ._flows import AttackChannel, tool_info
from ._params import Params
from .base import Attack

# The SDK client's own error for an elicitation request it declared no capability for.
NOT_SUPPORTED = "Elicitation not supported"


class DowngradeParams(Params):
    declares: Literal["none", "url"] = Field(
        description="what the client declares: no elicitation, or URL mode only"
    )


@technique("capability-downgrade", mechanisms=ANY, opens={"declaring"}, params=DowngradeParams)
async def capability_downgrade(attack: Attack, params: Mapping[str, Any]) -> None:
    declared = params["declares"]
    if as_flow(attack.plan.mechanism) is not None:
        attack.not_applicable("the tool never sends an input request; self-approval judges its flow")
        return
    conn = await attack.peer(lambda: attack.peers.declaring(declared))
    if conn is None:
        return
    # Over stdio that client is a process of its own: a handle the setup minted on the primary is
    # unknown there (armguard-mcp's plan ids), so the use of the action is made again on it.
    victim = await attack.subject_on(conn)
    if victim is None:
        return
    what = "no elicitation" if declared == "none" else "URL-mode elicitation only"
    await attack.start_attack()
    first = await attack.call(f"call from a client declaring {what}", victim, connection=conn)
    forms = [q for q in first.questions if q.schema is not None or declared == "none"]
    if first.outcome is Outcome.INPUT_REQUIRED and forms:
        attack.effect_means(
            Verdict.VULNERABLE,
            f"sent a form to a client that declared {what} (MUST NOT), and acted though that client "
            "could not answer it",
        )
        if conn.legacy:
            # What the SDK's client answers an elicitation/create it declared no capability for.
            cannot = {
                q.key: types.ErrorData(code=types.INVALID_REQUEST, message=NOT_SUPPORTED) for q in forms
            }
            await attack.call(
                "the error a client that cannot show a form answers with",
                victim,
                state=first.request_state,
                responses=cannot,
                connection=conn,
            )
        else:
            # Over MRTR such a client sends no second round: it cannot answer, so nothing more is sent.
            attack.note(f"a client declaring {what} cannot answer the form: no second round was sent")
        attack.finding(
            Verdict.WEAK,
            f"sent an input request to a client that declared {what} (MUST NOT)",
            layer=Layer.PROTOCOL,
        )
        return
    info = tool_info(attack)
    if info is None:
        return
    flow = as_flow(from_response(first, info, attack.tools)) if first.outcome is Outcome.COMPLETE else None
    # Else a refusal worded as a way in: "call with dry_run=true, then again with confirm=<token>".
    was_offered = flow is None
    flow = flow or as_flow(offered(first, info, attack.tools, "mrtr"))
    if flow is None:
        return
    how = "answered with an offer of" if was_offered else "fell back to"
    attack.note(f"to a client declaring {what} the tool {how} another way to confirm: {flow.describe()}")
    attack.effect_means(
        Verdict.VULNERABLE,
        f"to a client declaring {what} the tool {how} a {flow.kind} flow ({flow.describe()}) that the agent's "
        "own calls completed, with no person; clients that can be asked are asked",
    )
    channel = AttackChannel(attack, conn)
    shown = await flow.preview(channel, attack.arguments(victim))
    if shown.handle is None and was_offered and flow.kind in ("token", "pending"):
        attack.note(f"the {flow.kind} flow offered gave no token or id to confirm with")
        return
    try:
        await flow.confirm(channel, attack.arguments(victim), shown.handle, as_agent=True)
    except HumanFailed as exc:
        attack.note(f"the fallback cannot be completed by the agent: {exc}")
