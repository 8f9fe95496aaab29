"""`type-ahead`: an answer already typed on the person's terminal approves the next question unread.

A server that asks its person on its own terminal (a waits flow whose `human:` steps answer a
`terminal:` prompt) must take as the answer only what is typed once the question is shown. A `y`
and Enter typed twice for an earlier question, pasted, or typed by someone expecting the question
waits in the terminal's input. A server that reads without first throwing away what was already
there (`termios.tcflush(fd, TCIFLUSH)` before the prompt) takes that line as the answer to a
question nobody has read.

Before the agent's call the attack types the answer the profile's terminal steps would give. The
call goes out only once that line is waiting in the terminal's input, so the order is fixed and
nothing waits for a window to open. The call is then sent with nobody answering. The action taking
effect is vulnerable. The call ending with nothing moved is refused, and the refusal is the
tool's. The attack waits as long as the unanswered family does: a round trip, plus the target's
own `answer_deadline` when the profile declares one. The unanswered control, which every attack
waits on, has already seen the server give up on an unanswered question within that bound. Once
the call is over, whatever is still unread is thrown away so that it answers no later question.
If the server never read its terminal at all, the attack proved nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..channels.base import PLACEHOLDER
from ..channels.terminal import Answer
from ..confirmations import AgentFlow, HumanFailed, as_flow
from ..engine.reading import Judged, Reading, Seen, reads
from ..models import Layer, Part, Verdict
from . import ANY, technique
from ._flows import AttackChannel
from .base import Attack

# The names a terminal answer may hold that are known before any question (`Where.filled`): a name a
# step saves (a code the prompt shows) is made from what the person reads, so it cannot be typed ahead.
_KNOWN_AHEAD = frozenset({"root", "url"})


@dataclass(frozen=True, slots=True)
class AnswerTypedAhead(Part):
    """The answers typed on the person's terminal before the call, and whether all of it was still unread after."""

    answers: tuple[str, ...]
    unread: bool


@reads(AnswerTypedAhead)
class ReadAnswerTypedAhead(Reading[AnswerTypedAhead]):
    def moved(self, part: AnswerTypedAhead, seen: Seen) -> Judged | None:
        if not part.unread:
            return None
        # It acted without ever reading its terminal: no answer was taken as a yes (unanswered's finding,
        # which its control reports first). The answer typed ahead had nothing to do with it.
        lost = ", ".join([*seen.effect.removed, *seen.effect.changed, *seen.effect.observed][:4])
        return (
            Verdict.VULNERABLE,
            Layer.NONE,
            f"acted without reading its terminal (the answer typed ahead was still unread): no answer was "
            f"taken as a yes: {lost}",
        )

    def still(self, part: AnswerTypedAhead, seen: Seen) -> Judged | None:
        if not part.unread:
            return None
        reason = (
            f"the target never read its terminal during the call: the answer typed ahead ({_typed(part)}) was "
            "still unread when the call ended, so whether it discards what was typed before its question is not shown"
        )
        return Verdict.INCONCLUSIVE, None, reason

    def held(self, part: AnswerTypedAhead, seen: Seen, said: str) -> str:
        return f"the answer typed before the question was shown ({_typed(part)}) approved nothing: {said}"


def _typed(part: AnswerTypedAhead) -> str:
    return ", ".join(repr(answer) for answer in part.answers)


@technique("type-ahead", mechanisms=ANY)
async def type_ahead(attack: Attack, params: Mapping[str, Any]) -> None:
    found = _answered_on_a_terminal(attack)
    if found is None:
        return
    flow, answers = found
    victim = attack.victim
    channel = AttackChannel(attack)
    await attack.start_attack()
    attack.effect_means(
        Verdict.VULNERABLE,
        "acted on an answer typed on the person's terminal before its question was shown: the server read "
        "its terminal without throwing away what was already typed, so the approval was given unread",
    )
    typed = left = 0
    try:
        for answer in answers:
            saved = await channel.human("the person's answer, typed ahead", (answer.typed_ahead(),), {})
            typed += int(saved.get("typed", "0"))
        # Nobody answers the question the call shows: the line typed ahead is all there is.
        await flow.confirm(channel, attack.arguments(victim), None, as_agent=True)
    except HumanFailed as exc:
        attack.setup_failed(f"the answer could not be typed ahead: {exc}")
        return
    finally:
        # What is left unread answers no later question, whatever became of this one.
        for answer in answers:
            saved = await channel.human("", (answer.unread_after(),), {})
            left += int(saved.get("unread", "0"))
    # Nothing of it read: the server never read its terminal. Part of it read (a prompt that takes one
    # key, leaving the Enter) is a read like any other.
    attack.record(AnswerTypedAhead(tuple(answer.answer for answer in answers), unread=left >= typed))
    if left:
        attack.note(
            f"{left} of the {typed} bytes typed ahead were still unread on the terminal when the call ended, "
            "and were thrown away"
        )
    else:
        attack.note("what was typed ahead was gone from the terminal's input when the call ended")


def _answered_on_a_terminal(attack: Attack) -> tuple[AgentFlow, tuple[Answer, ...]] | None:
    """The flow whose call waits while its person answers a terminal prompt, and the answers they type.

    Else not applicable, saying why: nothing of the person's can be typed ahead of the question.
    """
    flow = as_flow(attack.plan.mechanism)
    if flow is None:
        asked = "the client's elicitation/create question" if attack.primary.legacy else "an MRTR question"
        attack.not_applicable(
            f"the tool asks over MCP ({asked}), not on a terminal of the server's: nothing typed there answers it"
        )
        return None
    person = flow.waits_on
    if not flow.waits_for_person or person is None:
        attack.not_applicable(
            f"no call waits while a person answers on a terminal, so nothing can be typed ahead of its "
            f"question: {flow.describe()}"
        )
        return None
    answers = tuple(step for step in person.approve if isinstance(step, Answer))
    if not answers:
        kinds = ", ".join(sorted({step.kind for step in person.approve}))
        attack.not_applicable(
            f"the person answers on no terminal (their steps: {kinds}), so nothing can be typed ahead of the "
            "question"
        )
        return None
    more = sorted(
        {
            step.kind
            for step in person.approve
            if not isinstance(step, Answer) and step.kind != "read" and not getattr(step, "shows", False)
        }
    )
    if more:
        attack.not_applicable(
            f"the person approves with more than a terminal answer ({', '.join(more)} steps too): an answer "
            "typed ahead cannot give the approval by itself"
        )
        return None
    for answer in answers:
        if made_from := sorted(set(PLACEHOLDER.findall(answer.answer)) - _KNOWN_AHEAD):
            attack.not_applicable(
                f"the terminal answer is made from what the person is shown ({{{made_from[0]}}}): it cannot "
                "be typed before the question"
            )
            return None
    return flow, answers
