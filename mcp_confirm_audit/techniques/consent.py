"""`consent`: answers that are not a yes must never act.

Decline and cancel, an accepted form that says no, and answers that break the
form's schema (a string "false" for a boolean, 1, a missing field, the answer
under the wrong key, a result of the wrong kind under the right key).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from mcp import types
from pydantic import Field

from ..confirmations import answers
from ..confirmations.honest import approved_elsewhere
from ..models import Verdict
from . import technique
from ._params import Params
from .base import Attack

# Per decision field type, what each schema-violating answer puts in it.
_VIOLATIONS: dict[str, dict[str, Any]] = {
    "string-false": {"boolean": "false", "enum": "false"},
    "string-no": {"boolean": "no", "enum": "no"},
    "integer-one": {"boolean": 1, "enum": 1, "name": 1},
}


class ConsentParams(Params):
    answer: Literal[
        "decline",
        "cancel",
        "negative",
        "string-false",
        "string-no",
        "integer-one",
        "missing-field",
        "wrong-key",
        "wrong-kind",
        "null-content",
    ] = Field(description="the answer sent in place of a yes")


# The answers that accept, in a form of their own: an accept is what has the person take their steps.
_ACCEPTING = frozenset({"negative", "string-false", "string-no", "integer-one", "missing-field", "wrong-key"})


@technique("consent", params=ConsentParams)
async def consent(attack: Attack, params: Mapping[str, Any]) -> None:
    victim = attack.victim
    answer = params["answer"]
    if answer in _ACCEPTING and approved_elsewhere(attack.plan.mechanism):
        # The person approves on their own channel before the retry (confirmation.mrtr.human): the in-band
        # answer is the client's, not their consent, and a server may ignore it by design. Whether it
        # acts with nobody approving is url-consent's question; decline and cancel are still judged here.
        attack.not_applicable(
            "the person approves this question on their own channel (confirmation.mrtr.human), before the "
            f"client's accepting retry: the form of the in-band answer ({answer}) is not their consent, so it "
            "is not the gate; url-consent judges an accept with nobody approving"
        )
        return
    first = await attack.ask(victim)
    if attack.failed:
        return
    question = first.questions[0]
    responses: Mapping[str, Any]
    if answer in ("decline", "cancel"):
        responses = attack.reply(first, answer)
    elif answer == "negative":
        content = attack.no(question, victim)
        if content is None:
            attack.not_applicable("the form has no field that can say no")
            return
        responses = {question.key: types.ElicitResult(action="accept", content=content)}
    elif answer in _VIOLATIONS:
        field = answers.yes_no_field(question.schema, *attack.names(victim))
        if field is None or field[1] not in _VIOLATIONS[answer]:
            attack.not_applicable(f"the form has no field a {answer} answer applies to")
            return
        content = {**attack.yes(question, victim), field[0]: _VIOLATIONS[answer][field[1]]}
        responses = {question.key: types.ElicitResult(action="accept", content=content)}
        if answer == "integer-one" and field[1] == "boolean":
            # 1 for true is the yes itself in the boolean's own type family (pydantic's lax mode takes
            # it): a client able to send it could send true. A SHOULD (validate strictly), not a bypass.
            attack.effect_means(
                Verdict.WEAK,
                "the integer 1 was taken for true: the person's yes in a lax form, which any client that can "
                "send 1 could send as true; validate the answer strictly",
            )
    elif answer == "missing-field":
        field = answers.yes_no_field(question.schema, *attack.names(victim))
        content = attack.yes(question, victim)
        if field is None:
            attack.not_applicable("the form has no decision field to leave out")
            return
        content.pop(field[0], None)
        responses = {question.key: types.ElicitResult(action="accept", content=content)}
    elif answer == "wrong-key" and attack.primary.legacy:
        attack.not_applicable(
            "a legacy answer is the reply to the server's own elicitation/create request: it has no key "
            "that could be another question's"
        )
        return
    elif answer == "wrong-key":
        responses = {
            f"not-{q.key}": types.ElicitResult(action="accept", content=attack.yes(q, victim))
            for q in first.questions
        }
    elif answer == "wrong-kind":
        responses = {q.key: types.ListRootsResult(roots=[]) for q in first.questions}
    elif answer == "null-content":
        if all(answers.yes_no_field(q.schema, *attack.names(victim)) is None for q in first.questions):
            # Nothing in the form can say yes or no (FastMCP's `response_type=None`, an empty schema):
            # the person's accept is the whole decision, and no content says what an empty one does.
            attack.not_applicable(
                "the form has no field that decides: its accept is the yes itself, so an accept with no "
                "content says what one with empty content says"
            )
            return
        await attack.start_attack()
        await attack.call_raw(
            "accept with content: null",
            {
                "name": attack.plan.name,
                "arguments": attack.arguments(victim),
                "requestState": first.request_state,
                "inputResponses": {q.key: {"action": "accept", "content": None} for q in first.questions},
            },
        )
        return
    else:
        raise ValueError(f"consent: unknown answer {answer!r}")
    await attack.start_attack()
    await attack.call(f"answer: {answer}", victim, state=first.request_state, responses=responses)
