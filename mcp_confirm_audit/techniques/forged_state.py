"""`forged-state`: request state the target never minted, or minted and then altered.

The spec makes the state attacker-controlled: whatever comes back must be
authenticated before it is trusted. Fixed forgeries, a state from another
process of the same server, byte-level mutations of a real state, and, when
the state is readable, an edit that names a file the user never saw.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

from ..confirmations import statecodec
from ..engine.action import Instance
from ..models import Response
from . import technique
from .base import Attack


@technique("forged-state")
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
    if isinstance(victim, Instance):
        await _edit_values(attack, readable, first, victim)
        return
    canary = attack.case.inside_canary
    edited = statecodec.retarget(readable, _spellings(attack, victim), _spellings(attack, canary))
    if edited is None:
        attack.not_applicable("the state is readable but does not name the file")
        return
    await attack.start_attack()
    await attack.call(
        "the victim's approval edited to name the canary",
        canary,
        state=edited,
        responses=attack.accept(first, canary),
    )


async def _edit_values(attack: Attack, readable: Any, first: Response, victim: Instance) -> None:
    """A readable state's argument values replaced by another action's: what the user never saw."""
    other = await attack.another("edited")
    if not isinstance(other, Instance):
        return
    changed = {
        k: (victim.arguments[k], v)
        for k, v in other.arguments.items()
        if k in victim.arguments and v != victim.arguments[k]
    }
    edited = _edited(readable, changed)
    if edited is None:
        attack.not_applicable("the state is readable but carries none of the action's argument values")
        return
    await attack.start_attack()
    await attack.call(
        "the approval's state edited to name another action, on that action's call",
        other,
        state=edited,
        responses=attack.accept(first, other),
    )


def _edited(readable: Any, changed: Mapping[str, tuple[Any, Any]]) -> str | None:
    """The state with every field named like a changed argument, and holding its value, rewritten."""
    try:
        data = json.loads(readable.text)
    except ValueError:
        return None

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: changed[k][1] if k in changed and v == changed[k][0] else walk(v) for k, v in value.items()
            }
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    rewritten = walk(data)
    if rewritten == data:
        return None
    return statecodec.encode(readable, json.dumps(rewritten, separators=(",", ":")))


def _spellings(attack: Attack, path: Any) -> list[str]:
    """Every way the state might spell the path, longest first."""
    values = {attack.path_value(path), str(path), attack.case.rel(path), path.name}
    return sorted(values, key=len, reverse=True)
