"""`unanswered`: the person never answers the question.

Over the back channel the server's call stays open while it waits, so what it
does when no answer comes is its own choice: stop waiting and fail closed
(refused), act as if no answer were a yes (vulnerable: the effect), or wait as
long as the connection lasts (weak: a question nobody answered holds the
action open for whoever answers it later). The harness waits one call
timeout, after the server's own deadline for its person when the profile
gives one (`answer_deadline`: a server that waits two minutes for its person
on purpose); the verdict reads what came back. An MRTR question holds nothing open
on the server (expiry judges its state's lifetime), so there it does not apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations import AgentFlow, HumanFailed, as_flow
from ..models import Outcome, Verdict
from . import ANY, technique
from ._flows import AttackChannel
from .base import Attack


@technique("unanswered", mechanisms=ANY, without_an_honest_flow=True)
async def unanswered(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = as_flow(attack.plan.mechanism)
    if flow is not None and flow.waits_for_person:
        await _nobody_at_the_terminal(attack, flow)
        return
    if flow is not None:
        attack.not_applicable(
            f"a {flow.kind} flow holds no call open for its person: a flow the agent completes alone is "
            "self-approval's"
        )
        return
    if not attack.primary.legacy:
        attack.not_applicable(
            "an MRTR question holds no call open on the server: a state nobody answers simply lapses "
            "(expiry judges its lifetime)"
        )
        return
    victim = attack.victim
    first = await attack.ask(victim)
    if attack.failed:
        return
    await attack.start_attack()
    bound = attack.primary.unanswered_timeout
    waited = await attack.call(
        f"no answer: the harness waits {bound:g}s for the server to give up",
        victim,
        state=first.request_state,
        unanswered=True,
    )
    if waited.outcome is Outcome.TRANSPORT:
        declared = attack.primary.answer_deadline
        beyond = (
            f" (its declared answer_deadline of {declared:g}s, then a round trip)"
            if declared is not None
            else " (a server that waits longer on purpose: set answer_deadline in the profile)"
        )
        attack.finding(
            Verdict.WEAK,
            f"the server still waited for the person after {bound:g}s{beyond}: a question nobody "
            "answers holds the action open (give the wait a deadline of its own)",
        )


async def _nobody_at_the_terminal(attack: Attack, flow: AgentFlow) -> None:
    """A call that waits for its person (a terminal prompt), sent with nobody answering it.

    The `unanswered` control judges this first; a flow that acted there fails it, and every
    other attack waits for an honest flow (`Attack.honest_flow_failed`). Only then is it sent
    here, so that acting on no answer is this family's finding rather than the controls' alone.
    """
    if attack.honest_flow_failed is None:
        attack.not_applicable(
            "the unanswered control sent this flow's call with nobody answering, and it did not act"
        )
        return
    if attack.names_file and attack.plan.path_arg is None:
        attack.setup_failed(f"the honest flow never completed ({attack.honest_flow_failed})")
        return
    victim = attack.victim
    await attack.start_attack()
    attack.effect_means(
        Verdict.VULNERABLE, "acted though nobody answered its person: no answer was taken as a yes"
    )
    if attack.names_file:
        # No honest flow taught where the effect shows, nor what the gate writes on every call (a
        # proxy's log of calls in the root): the file the call names going is what acting means.
        attack.only_the_case_counts()
    try:
        await flow.confirm(AttackChannel(attack), attack.arguments(victim), None, as_agent=True)
    except HumanFailed as exc:
        attack.note(f"nobody answered, and the call could not go on: {exc}")
