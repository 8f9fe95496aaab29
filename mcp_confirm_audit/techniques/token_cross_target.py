"""`token-cross-target`: a token given for one action confirms another (other arguments, another tool)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..confirmations.detect import from_schemas
from ..confirmations.token import Token
from ..oracle.sandbox import VICTIM_TEXT
from . import technique
from ._flows import AttackChannel, flow_or_not_applicable
from .base import Attack


@technique("token-cross-target")
async def token_cross_target(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = flow_or_not_applicable(attack, "token to carry to another action")
    if flow is None:
        return
    if not isinstance(flow, Token):
        # A pending approval names only its id: there is no other action to carry it to.
        attack.not_applicable(f"the approval names only its action: {flow.describe()}")
        return
    if not attack.file_only():  # driven for an action that names a file, so far
        return
    channel, victim = AttackChannel(attack), attack.case.victim
    if params["mode"] == "other-args":
        decoy = attack.case.add_file("decoy.txt")
        shown = await flow.preview(channel, attack.arguments(decoy))
        attack.note("the token was previewed for decoy.txt and is presented for the victim")
        tool = flow.tool
    elif params["mode"] == "other-tool":
        others = [t for t in attack.tools if t.name != flow.tool and isinstance(from_schemas(t), Token)]
        if not others:
            attack.not_applicable("no other tool of the target takes a confirmation token")
            return
        tool = others[0].name
        # A tool that acts with no token at all is the ungated family's finding, not this one's.
        plain = attack.case.add_file("plain.txt")
        await channel.call(
            f"{tool} without a token, on a decoy", tool, flow.confirming(attack.arguments(plain), None)
        )
        if not plain.exists() or plain.read_text() != VICTIM_TEXT:
            attack.not_applicable(f"{tool} acts without any token (see the ungated family)")
            return
        shown = await flow.preview(channel, attack.arguments(victim))
        attack.note(f"the token was previewed on {flow.tool} and is presented to {tool}")
    else:
        raise ValueError(f"token-cross-target: unknown mode {params['mode']!r}")
    if shown.handle is None:
        attack.setup_failed(f"the preview returned no token ({shown.response.text[:160]})")
        return
    await attack.start_attack()
    await flow.confirm(channel, attack.arguments(victim), shown.handle, tool=tool)
