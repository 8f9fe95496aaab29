"""`cross-target`: an approval for one call presented on another.

The request state must be bound to the method, the tool and every argument:
an approval to delete A must not delete B, nor A with an added argument, nor
serve another tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from . import technique
from ._params import Params
from .base import Attack


class CrossTargetParams(Params):
    mode: Literal["other-file", "added-argument", "other-tool"]
    argument: str = Field("force", description="the argument added (added-argument)")


@technique(
    "cross-target",
    mechanisms={"mrtr"},
    needs_state=(
        "a legacy answer is the reply to one elicitation/create request inside one tools/call: "
        "there is no requestState to carry to another tool or argument"
    ),
    params=CrossTargetParams,
)
async def cross_target(attack: Attack, params: Mapping[str, Any]) -> None:
    victim = attack.victim
    first = await attack.ask(victim)
    if attack.failed:
        return
    mode = params["mode"]
    if mode == "other-file":
        other = await attack.another("other")
        if other is None:
            return
        await attack.start_attack()
        await attack.call(
            "A's approval on the call for B",
            other,
            state=first.request_state,
            responses=attack.accept(first, other),
        )
    elif mode == "added-argument":
        extra = str(params.get("argument", "force"))
        arguments = attack.arguments(victim, **{extra: True})
        await attack.start_attack()
        await attack.call(
            f"the approval with an added argument {extra!r}",
            victim,
            arguments=arguments,
            state=first.request_state,
            responses=attack.accept(first, victim),
        )
    elif mode == "other-tool":
        tool = attack.other_tool()
        if tool is None:
            read_only = sorted(t.name for t in attack.tools if t.name != attack.plan.name)
            attack.not_applicable(
                f"the target's other tools are read-only ({', '.join(read_only)}): an approval presented to "
                "one has nothing to act on"
                if read_only
                else "the target offers no other tool to present the state to"
            )
            return
        name, arguments = tool
        await attack.start_attack()
        await attack.call(
            f"the approval presented on {name!r}",
            victim,
            tool=name,
            arguments=arguments,
            state=first.request_state,
            responses=attack.accept(first, victim),
        )
    else:
        raise ValueError(f"cross-target: unknown mode {mode!r}")
