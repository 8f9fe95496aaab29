"""`token-cross-target`: a token given for one action confirms another (other arguments, another tool)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..confirmations import as_flow
from ..confirmations.detect import from_schemas
from ..target.driver import ToolInfo
from . import ANY, technique
from ._flows import AttackChannel, token_or_not_applicable
from ._params import Params
from .base import Attack


class TokenCrossTargetParams(Params):
    mode: Literal["other-args", "other-tool"]


@technique("token-cross-target", mechanisms=ANY, input_value=True, params=TokenCrossTargetParams)
async def token_cross_target(attack: Attack, params: Mapping[str, Any]) -> None:
    # A pending approval names only its id: there is no other action to carry it to.
    flow = token_or_not_applicable(
        attack, "token to carry to another action", "the approval names only its action"
    )
    if flow is None:
        return
    channel, victim = AttackChannel(attack), attack.victim
    if params["mode"] == "other-args":
        decoy = await attack.another("decoy")
        if decoy is None:
            return
        if attack.arguments(decoy) == attack.arguments(victim):
            # The decoy's token would be the victim's own: presenting it proves nothing.
            attack.setup_failed("no second use of the action with other arguments could be made")
            return
        if flow.reads_its_preview(attack.arguments(victim)):
            # Its confirming call carries what the victim's own preview handed out (mcp-changeset's change
            # id) beside the token: previewed here, in this attack's world, or there is nothing to carry.
            await flow.preview(channel, attack.arguments(victim))
            attack.note("the victim was previewed first: its confirming call carries that preview's fields")
        shown = await flow.preview(channel, attack.arguments(decoy))
        attack.note(f"the token was previewed for {attack.path_value(decoy)} and is presented for the victim")
        tool = flow.tool
    elif params["mode"] == "other-tool":
        others = [t for t in attack.tools if t.name != flow.tool and _takes_a_token(t)]
        if not others:
            attack.not_applicable("no other tool of the target takes a confirmation token")
            return
        tool = others[0].name
        # A tool that acts with no token at all is the ungated family's finding, not this one's.
        plain = await attack.another("plain")
        if plain is None:
            return
        since = await attack.mark()
        # The confirming call's arguments with no token in them (the redemption of no handle).
        unredeemed = flow.redemption(attack.arguments(plain), None, {})
        assert unredeemed is not None  # a flow whose call carries a token is redeemed by that call
        await channel.call(f"{tool} without a token, on a decoy", tool, unredeemed[1])
        if await attack.took_effect(plain, since) or plain.rewritten():
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


def _takes_a_token(tool: ToolInfo) -> bool:
    """Whether another tool's schema says its call carries a confirmation token."""
    found = as_flow(from_schemas(tool))
    return found is not None and found.token_in_the_call
