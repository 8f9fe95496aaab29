"""`token-cross-target`: an approval given for one action confirms another (other arguments, another tool).

Tried wherever the call that redeems an approval carries the action's own arguments: a token's
confirming call, or a pending action's gated call sent again (cmd-line-mcp 0.6.1 stages a write
under the agent's own `session_id` and, once the session's writes are approved, runs any write
sent with it). Another action's arguments then go with the approval of the one approved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from ..confirmations import as_flow
from ..confirmations.detect import from_schemas
from ..target.driver import ToolInfo
from . import ANY, technique
from ._flows import AttackChannel, flow_or_not_applicable
from ._params import Params
from .base import Attack


class TokenCrossTargetParams(Params):
    mode: Literal["other-args", "other-tool"]


@technique("token-cross-target", mechanisms=ANY, input_value=True, params=TokenCrossTargetParams)
async def token_cross_target(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = flow_or_not_applicable(attack, "token to carry to another action")
    if flow is None:
        return
    if not flow.redemption_carries_the_action:
        # `execute_pending(pending_id)`, or an approval that acts by itself: the redemption names no
        # action, so there is no other action's arguments to send with it.
        attack.not_applicable(f"the call that redeems the approval sends only its id: {flow.describe()}")
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
        given = "token" if flow.token_in_the_call else "approval"
        attack.note(f"the {given} was given for {attack.path_value(decoy)} and is presented for the victim")
        tool = flow.tool
    elif params["mode"] == "other-tool":
        if not flow.token_in_the_call:
            # A pending approval is redeemed by the gated tool's own call: presenting it to another tool
            # is not tried yet (a server that keyed its approvals by session alone would let it act).
            attack.not_applicable(f"only a token is presented to another tool here: {flow.describe()}")
            return
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
