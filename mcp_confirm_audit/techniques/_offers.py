"""A refusal that offers another way to confirm is followed before the attack is judged.

"Declined. Call again with dry_run, then confirm=<token>": the server has a
second gate beside the one audited, and an agent can take it. The harness
takes it too, with the agent's own calls only (no person's channel), in the
same attack: if that acts, the refusal was no refusal.
"""

from __future__ import annotations

from ..confirmations import HumanFailed, as_flow, detect
from ..models import Verdict
from ._flows import AttackChannel
from .base import Attack


async def follow_offer(attack: Attack) -> None:
    reply = attack.last_reply()
    tool = next((t for t in attack.tools if t.name == attack.plan.name), None)
    if reply is None or tool is None or attack.failed or attack.effect_judged:
        return
    current = attack.plan.mechanism.kind if attack.plan.mechanism is not None else "mrtr"
    flow = as_flow(detect.offered(reply, tool, attack.tools, current))
    if flow is None or await attack.since_start():
        return  # nothing offered, or the attack acted already: its own verdict stands
    attack.note(f"the reply offered another way to confirm ({flow.describe()}): followed as the agent alone")
    channel = AttackChannel(attack)
    arguments = attack.arguments(attack.aimed or attack.victim)
    preview = await flow.preview(channel, arguments)
    if preview.handle is None and flow.kind in ("token", "pending"):
        attack.note("the offered flow gave no token or id to confirm with")
        return
    try:
        await flow.confirm(channel, arguments, preview.handle, as_agent=True)
    except HumanFailed as exc:
        attack.note(f"the offered flow needs a person the agent cannot play: {exc}")
        return
    attack.effect_means(
        Verdict.VULNERABLE,
        f"the refusal offered another way to confirm ({flow.kind}), and the agent's own calls took it to the "
        "effect with no person",
    )
