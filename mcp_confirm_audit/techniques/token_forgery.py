"""`token-forgery`: a token the harness made without the preview confirms the action.

The preview is made for a decoy, so the token's shape is known; then, for the
victim, no preview at all: a random token of that shape, or the common
constructions from the arguments (sha256, sha1, md5 of the JSON, sorted-keys
JSON, compact JSON, joined values, with and without the tool's name, cut to the
token's length). A construction that reproduces the decoy's own token is sent
for the victim; its effect says whether it was accepted.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import string
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..confirmations.token import Token
from . import technique
from ._flows import AttackChannel, token_or_not_applicable
from .base import Attack

Construction = tuple[str, Callable[[Mapping[str, Any]], str]]


@technique("token-forgery")
async def token_forgery(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = token_or_not_applicable(attack, "token to forge", "no token to forge")
    if flow is None:
        return
    channel = AttackChannel(attack)
    decoy = await attack.another("decoy")
    if decoy is None:
        return
    shown = await flow.preview(channel, attack.arguments(decoy))
    if shown.handle is None:
        attack.setup_failed(f"the preview returned no token ({shown.response.text[:160]})")
        return
    observed = shown.handle
    victims = [attack.victim]
    if attack.arguments(decoy) == attack.arguments(attack.victim):
        # A construction that reproduces the decoy's token would then be the victim's real one.
        attack.setup_failed("no second use of the action with other arguments could be made")
        return
    if attack.victim.previewed_by_controls:
        # The victim's arguments are the controls' own: a token made from them alone may be spent
        # already. A use of the action nobody previewed shows what a forger would reach.
        fresh = await attack.another("forged")
        if fresh is not None and attack.arguments(fresh) not in [
            attack.arguments(decoy),
            *map(attack.arguments, victims),
        ]:
            victims.append(fresh)
    forged: list[tuple[dict[str, Any], str]] = []
    if params["mode"] == "random":
        forged = [(attack.arguments(v), _random_like(observed)) for v in victims]
        attack.note(f"a random token of the observed shape ({len(observed)} characters)")
    else:
        decoy_args = attack.arguments(decoy)
        made = [
            (name, build)
            for name, build in _constructions(flow, len(observed))
            if build(decoy_args) == observed
        ]
        name, build = made[0] if made else next(iter(_constructions(flow, len(observed))))
        forged = [(attack.arguments(v), build(attack.arguments(v))) for v in victims]
        attack.note(
            f"the decoy's token is {name} of its arguments"
            if made
            else f"no common construction reproduced the decoy's token; sent {name} of the victim's arguments"
        )
    await attack.start_attack()
    for arguments, token in forged:
        # The agent's own token: never handed to a person to sign or follow.
        await flow.confirm(channel, arguments, token, as_agent=True)


def _random_like(token: str) -> str:
    alphabet = (
        string.hexdigits[:16] if all(c in string.hexdigits[:16] for c in token) else string.ascii_letters
    )
    return "".join(secrets.choice(alphabet) for _ in token)


def _constructions(flow: Token, length: int) -> Iterator[Construction]:
    def texts(args: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
        for label, data in (
            ("the arguments", dict(args)),
            ("the arguments and preview", {**args, **flow.preview_args}),
        ):
            yield f"sorted-keys JSON of {label}", json.dumps(data, sort_keys=True)
            yield f"JSON of {label}", json.dumps(data)
            yield f"compact sorted JSON of {label}", json.dumps(data, sort_keys=True, separators=(",", ":"))
        for sep in ("", ":", "|"):
            yield f"values joined by {sep!r}", sep.join(str(v) for v in args.values())

    def build(algorithm: str, index: int, with_tool: bool) -> Callable[[Mapping[str, Any]], str]:
        def make(args: Mapping[str, Any]) -> str:
            text = list(texts(args))[index][1]
            text = f"{flow.tool}:{text}" if with_tool else text
            return hashlib.new(algorithm, text.encode()).hexdigest()[:length]

        return make

    labels = [label for label, _ in texts({"": ""})]
    for algorithm in ("sha256", "sha1", "md5"):
        for with_tool in (False, True):
            for index, label in enumerate(labels):
                prefix = "the tool name and " if with_tool else ""
                yield f"{algorithm} of {prefix}{label} (first {length})", build(algorithm, index, with_tool)
