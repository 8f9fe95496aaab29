"""`fabricated-approval`: an answer to a question, arriving without the question's state.

The SDK checks state only when state is sent: `inputResponses` with no
`requestState` (or a null one) reach the handler untouched. A tool that reads
the answer without demanding its state can be talked into acting in one call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from . import technique
from ._params import Params
from .base import Attack, on_the_wire


class FabricatedParams(Params):
    state: Literal["absent", "null"]


@technique(
    "fabricated-approval",
    mechanisms={"mrtr"},
    needs_state=(
        "a legacy answer can only be the reply to a question the server sent: there is nothing to "
        "fabricate without one"
    ),
    params=FabricatedParams,
)
async def fabricated_approval(attack: Attack, params: Mapping[str, Any]) -> None:
    victim = attack.victim
    # Learn the question's key and form from a question about another file;
    # the victim itself is never asked about, so no state for it exists.
    # An action that names no file is asked about itself: an agent that saw the question
    # and then answers it without its state is the same attack.
    decoy = await attack.another("decoy") if attack.names_file else victim
    if decoy is None:
        return
    learned = await attack.ask(decoy, label="learn the form's key from a question about another file")
    if attack.failed:
        return
    yes = attack.accept(learned, victim)
    await attack.start_attack()
    if params["state"] == "absent":
        await attack.call("an accept answer with no requestState", victim, responses=yes)
    elif params["state"] == "null":
        await attack.call_raw(
            "an accept answer with requestState: null",
            {
                "name": attack.plan.name,
                "arguments": attack.arguments(victim),
                "requestState": None,
                "inputResponses": on_the_wire(yes),
            },
        )
    else:
        raise ValueError(f"fabricated-approval: unknown state {params['state']!r}")
