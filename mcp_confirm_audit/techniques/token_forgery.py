"""`token-forgery`: a token the harness made without the preview confirms the action.

The preview is made for a decoy, so the token's shape is known; then, for the
victim, no preview at all: a random token of that shape (`mode: random`), or
(`mode: derived`) a token made from the victim's arguments. For that, the
decoy is previewed twice: the same token both times means the token is a
function of the call (deterministic: `weak`, the two previews and the token are
the evidence). The common constructions (`confirmations.derivations`) are
searched for one that makes the decoy's token; the one found is used to forge
the victim's, for a use nobody previewed. The arguments are searched as the
call sent them and as a server may fill them in first (`derivations.views`):
with the schema's defaults for the optional fields left out, and with what the
server derives from the subject itself (a file's sha256) beside them. Only the
effect of that forged redemption makes it `vulnerable`, and the reason names
the construction.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..confirmations import AgentFlow, derivations
from ..confirmations.base import Preview
from ..models import Verdict
from . import ANY, technique
from ._flows import AttackChannel, token_or_not_applicable, tool_info
from ._params import Params
from ._twins import redeemed_twin
from .base import Attack


class TokenForgeryParams(Params):
    mode: Literal["random", "derived"]


@technique("token-forgery", mechanisms=ANY, input_value=True, params=TokenForgeryParams)
async def token_forgery(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = token_or_not_applicable(attack, "token to forge", "no token to forge")
    if flow is None:
        return
    channel = AttackChannel(attack)
    decoy = await attack.another("decoy")
    if decoy is None:
        return
    decoy_args = attack.arguments(decoy)
    forger = attack.victim  # the use the forged token is for
    if decoy_args == attack.arguments(forger):
        # A construction that reproduces the decoy's token would then be the victim's real one.
        attack.setup_failed("no second use of the action with other arguments could be made")
        return
    if forger.previewed_by_controls:
        # The victim's arguments are the controls' own: the token of their preview may still be
        # issued, so a token made from them proves nothing. A use nobody previewed shows what a
        # forger would reach.
        fresh = await attack.another("forged")
        if fresh is None:
            return
        if attack.arguments(fresh) not in [decoy_args, attack.arguments(forger)]:
            forger = fresh
        else:
            # Only two uses (an argument of two values, "tanks: rain, well"): the controls' own
            # use is previewed again as the decoy, and the other one, which nobody previewed yet,
            # is the forger's.
            attack.note(
                "only two uses of the action could be made: the controls' own is the decoy, "
                "the other, previewed by nobody, the forger's"
            )
            decoy, forger = forger, decoy
            decoy_args = attack.arguments(decoy)
    shown = await flow.preview(channel, decoy_args)
    if shown.handle is None:
        attack.setup_failed(f"the preview returned no token ({shown.response.text[:160]})")
        return
    observed = shown.handle
    uses = [attack.arguments(forger)]
    if params["mode"] == "random":
        forged = [(arguments, _random_like(observed)) for arguments in uses]
        attack.note(f"a random token of the observed shape ({len(observed)} characters)")
    else:
        info = tool_info(attack, flow.tool)
        confirming = flow.redemption(decoy_args, observed, {})
        seen = _Seen(
            info.input_schema if info is not None else {},
            tuple(k for k in (confirming[1] if confirming else {}) if k not in decoy_args),
            decoy.derived_values(),
        )
        forged = await _derived(
            attack, flow, channel, decoy_args, shown, [(uses[0], forger.derived_values())], seen
        )
    # Its twin: the decoy's own token, redeemed for the decoy before the attack proper.
    await redeemed_twin(attack, flow, channel, decoy_args, observed)
    await attack.start_attack()
    for arguments, token in forged:
        # The agent's own token: never handed to a person to sign or follow.
        await flow.confirm(channel, arguments, token, as_agent=True)


@dataclass(frozen=True, slots=True)
class _Seen:
    """What the server may fill the arguments in with: the tool's schema, the arguments a confirming call
    adds (never part of what the token is made of), and what it derives from the decoy's subject."""

    schema: Mapping[str, Any]
    leave_out: tuple[str, ...]
    derived: Mapping[str, str]


async def _derived(
    attack: Attack,
    flow: AgentFlow,
    channel: AttackChannel,
    decoy_args: dict[str, Any],
    shown: Preview,
    uses: Sequence[tuple[dict[str, Any], Mapping[str, str]]],
    seen: _Seen,
) -> list[tuple[dict[str, Any], str]]:
    """The decoy previewed again (the same token: deterministic), and the tokens forged for `uses`."""
    observed = shown.handle or ""
    again = await flow.preview(channel, decoy_args)
    found = derivations.matching_views(
        flow.tool, decoy_args, observed, seen.schema, seen.leave_out, seen.derived
    )
    forged, used = _forge(flow.tool, uses, found, len(observed), seen)
    names = " or ".join(f"{d.name} of {v.name}" for v, d in used)
    if found:
        attack.note(f"the decoy's token is {names}")
        attack.effect_means(
            Verdict.VULNERABLE,
            f"a token forged as {names}, for a use nobody previewed, confirmed the action",
        )
    else:
        tried = len(derivations.candidates(len(observed)))
        attack.note(
            f"none of {tried} common derivations reproduced the decoy's token; "
            f"sent {names} of the victim's arguments"
        )
    if again.handle == observed:
        attack.finding(Verdict.WEAK, _deterministic(decoy_args, shown, found[:1]))
    return forged


def _forge(
    tool: str,
    uses: Sequence[tuple[dict[str, Any], Mapping[str, str]]],
    found: Sequence[tuple[derivations.View, derivations.Derivation]],
    length: int,
    seen: _Seen,
) -> tuple[list[tuple[dict[str, Any], str]], list[tuple[derivations.View, derivations.Derivation]]]:
    """Each use's distinct forged tokens (by every derivation found, else a best guess), and by which."""
    tried = found or [(derivations.View(), derivations.candidates(length)[0])]
    forged: list[tuple[dict[str, Any], str]] = []
    used: list[tuple[derivations.View, derivations.Derivation]] = []
    for arguments, derived in uses:
        for view, derivation in tried:
            filled = view.of(arguments, seen.schema, seen.leave_out, derived)
            if filled is None:
                continue
            made = (arguments, derivation.make(tool, filled))
            if made not in forged:
                forged.append(made)
                if (view, derivation) not in used:
                    used.append((view, derivation))
    return forged, used


def _deterministic(
    arguments: Mapping[str, Any],
    preview: Preview,
    found: Sequence[tuple[derivations.View, derivations.Derivation]],
) -> str:
    """The evidence that the token is a function of the call: two previews, one token."""
    said = (
        f"the token is deterministic: two previews of the same arguments "
        f"{json.dumps(dict(arguments), ensure_ascii=True, sort_keys=True, default=str)} "
        f"both returned {preview.field or 'the token'} {json.dumps(preview.handle)}"
    )
    if not found:
        return f"{said}; no common derivation reproduces it (keyed, or a construction not tried)"
    # Whether a token forged that way acted is the effect's to say, not this line's.
    view, derivation = found[0]
    of = "them" if view == derivations.View() else view.name.replace("its arguments", "them", 1)
    return f"{said}; {derivation.name} of {of} reproduces it"


def _random_like(token: str) -> str:
    alphabet = (
        string.hexdigits[:16] if all(c in string.hexdigits[:16] for c in token) else string.ascii_letters
    )
    return "".join(secrets.choice(alphabet) for _ in token)
