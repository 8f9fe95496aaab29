"""`forged-state`: request state the target never minted, or minted and then altered.

The spec makes the state attacker-controlled: whatever comes back must be
authenticated before it is trusted. Fixed forgeries, a state from another
process of the same server, byte-level mutations of a real state, and, when
the state is readable, an edit that names a file the user never saw.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from ..confirmations import statecodec
from ..models import Response
from . import technique
from ._params import Params
from .base import Attack


class ForgedStateParams(Params):
    kind: Literal["value", "mutation", "other-process", "edit"]
    value: str | None = Field(None, description="the forged state (value); {random} is filled in")
    # statecodec.MUTATIONS
    mutation: (
        Literal[
            "flip-first-byte",
            "flip-key-id",
            "flip-nonce",
            "flip-middle-byte",
            "flip-last-byte",
            "truncate-one-byte",
            "truncate-half",
            "append-bytes",
            "other-version",
            "uppercase-prefix",
            "non-canonical-base64",
            "padded-base64",
            "doubled",
        ]
        | None
    ) = Field(None, description="how the real state is changed (mutation)")


@technique(
    "forged-state",
    mechanisms={"mrtr"},
    needs_state=(
        "on a legacy connection the server keeps the question's context in the open call; no state "
        "travels through the client, so there is none to forge"
    ),
    params=ForgedStateParams,
)
async def forged_state(attack: Attack, params: Mapping[str, Any]) -> None:
    victim = attack.victim
    kind = params["kind"]
    first = await attack.ask(victim)
    if attack.failed:
        return
    real = first.request_state or ""
    if (readable := statecodec.decode(real)) is not None:
        attack.note(f"the state is readable ({readable.encoding}): {readable.text[:160]!r}")
    yes = attack.accept(first, victim)

    if kind == "value":
        forged = str(params["value"]).replace("{random}", secrets.token_urlsafe(48))
        await attack.start_attack()
        await attack.call("a state the target never minted", victim, state=forged, responses=yes)
    elif kind == "mutation":
        mutated = statecodec.mutate(real, str(params["mutation"]))
        if mutated is None or mutated == real:
            attack.not_applicable(f"mutation {params['mutation']!r} does not apply to this state's format")
            return
        await attack.start_attack()
        await attack.call(f"the real state, {params['mutation']}", victim, state=mutated, responses=yes)
    elif kind == "other-process":
        if attack.peers.shared_keys:
            attack.not_applicable(
                "every process of the target shares one request-state key (shared_key_env), so another "
                "process's state is legitimately valid here; the cross-replica family judges what happens "
                "to it"
            )
            return
        other = await attack.peer(attack.other_connection)
        if other is None:
            return
        there = await attack.subject_on(other)
        if there is None:
            return
        theirs = await attack.ask(there, connection=other, label="ask another process of the same server")
        if attack.failed:
            return
        await attack.start_attack()
        await attack.call("another process's state", victim, state=theirs.request_state, responses=yes)
    elif kind == "edit":
        await _edit(attack, real, first)
    else:
        raise ValueError(f"forged-state: unknown kind {kind!r}")


async def _edit(attack: Attack, real: str, first: Response) -> None:
    readable = statecodec.decode(real)
    if readable is None:
        attack.not_applicable("the state is opaque, so it cannot be edited in place")
        return
    victim = attack.victim
    # Another subject of the same action the user never saw: another file, or the setup again.
    other = await attack.another("edited")
    if other is None:
        return
    edited = victim.edited_state(readable, other)
    if edited is None:
        attack.not_applicable(f"the state is readable but carries nothing that names {victim.describe()}")
        return
    await attack.start_attack()
    await attack.call(
        "the approval's state edited to name another subject, on that subject's call",
        other,
        state=edited,
        responses=attack.accept(first, other),
    )
