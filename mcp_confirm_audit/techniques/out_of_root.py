"""`out-of-root`: paths the server must never act on, and should never ask about.

Absolute paths outside, `../` traversal, the sibling that shares the root's
name as a prefix, a link in the root that already points outside, the root
itself, a directory, a NUL byte, an overlong path hiding a climb. Asking the user about one
of these and refusing afterwards is weak: the question itself is misleading.

Each is sent after its benign twin (`_twins.py`): the same call naming a harmless
file of the same shape. A refusal in words that name no gate's concern is the
tool's check when the twin reached the gate, and inconclusive when it did not.

Over a token or pending flow the preview is the question: a preview that hands
out a token (or stages a pending id) for such a path and is refused only when
confirmed is weak in the same way; the honest confirmation follows, as a user
who trusts the preview would give it. A flag flow has one call, with the flag.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from ..confirmations import AgentFlow, HumanFailed, as_flow
from ..models import Outcome, Verdict
from . import ANY, technique
from ._flows import AttackChannel
from ._params import Params
from ._twins import send_twin
from .base import Attack


class OutOfRootParams(Params):
    target: Literal[
        "absolute-outside",
        "traversal",
        "sibling-prefix",
        "link-outside",
        "root-itself",
        "directory",
        "nul-byte",
        "overlong",
    ]
    length: int = Field(3000, description="the path's length in characters (overlong)")


@technique("out-of-root", mechanisms=ANY, input_value=True, params=OutOfRootParams)
async def out_of_root(attack: Attack, params: Mapping[str, Any]) -> None:
    if not attack.file_only():
        return
    case = attack.case
    target = params["target"]
    root = attack.sandbox.root
    absolute = attack.style == "absolute"
    if target == "absolute-outside":
        value = str(case.outside_canary)
    elif target == "traversal":
        inner = os.path.relpath(case.outside_canary, root)
        value = f"{root}/{inner}" if absolute else inner
    elif target == "sibling-prefix":
        if not attack.sandbox.sibling_shares_prefix:
            attack.not_applicable(
                "the target serves a root the harness did not make, and a folder named like it would have "
                "to be written outside the sandbox"
            )
            return
        value = str(case.sibling_canary) if absolute else os.path.relpath(case.sibling_canary, root)
    elif target == "link-outside":
        link = case.directory / "link-to-outside.txt"
        link.symlink_to(case.outside_canary)
        value = attack.path_value(link)
    elif target == "root-itself":
        value = str(root) if absolute else "."
    elif target == "directory":
        value = attack.path_value(case.directory)
    elif target == "nul-byte":
        value = attack.path_value(case.victim) + "\x00.png"
    elif target == "overlong":
        # Thousands of "./" then a climb out: length must not smuggle a
        # traversal past checks that give up on long input.
        climb = os.path.relpath(case.outside_canary, root)
        padding = "./" * (int(params.get("length", 3000)) // 2)
        value = f"{root}/{padding}{climb}" if absolute else f"{padding}{climb}"
    else:
        raise ValueError(f"out-of-root: unknown target {target!r}")
    await send_twin(attack, _twin(attack, target, params))
    await attack.start_attack()
    if (flow := as_flow(attack.plan.mechanism)) is not None:
        await _over_a_flow(attack, flow, value)
        return
    first = await attack.call("name a path that must never be allowed", value)
    if first.outcome is Outcome.INPUT_REQUIRED and first.questions:
        # It asked. Answer yes, as a user who trusts the dialog would.
        await attack.call(
            "accept the question", value, state=first.request_state, responses=attack.accept(first, value)
        )


def _twin(attack: Attack, target: str, params: Mapping[str, Any]) -> str:
    """The hostile value's benign twin: a harmless file of the case, named in the same shape.

    Absolute where the hostile value is absolute, a climb that stays inside for a
    climb out, the same padding for an overlong path, the same suffix for a NUL byte.
    """
    root, case = attack.sandbox.root, attack.case
    twin = case.add_file("benign-twin.txt.png" if target == "nul-byte" else "benign-twin.txt", "harmless\n")
    inner = os.path.relpath(twin, root)
    if target == "absolute-outside":
        return str(twin)
    if target == "traversal":
        # Down into the case, up out of it, and down again: a climb that never leaves the root.
        climb = f"{os.path.relpath(case.directory, root)}/../{inner}"
        return f"{root}/{climb}" if attack.style == "absolute" else climb
    if target == "overlong":
        padding = "./" * (int(params.get("length", 3000)) // 2)
        return f"{root}/{padding}{inner}" if attack.style == "absolute" else f"{padding}{inner}"
    return attack.path_value(twin)


async def _over_a_flow(attack: Attack, flow: AgentFlow, value: str) -> None:
    channel, args = AttackChannel(attack), attack.arguments(value)
    handle = None
    if flow.kind == "waits":
        # The call waits while the person answers: no preview the harness could say no in, since
        # a "no" of its own would be credited to the target. The person says yes, as a trusting
        # one would; a prompt that never came is a refusal before asking.
        taken = channel.taken
        try:
            await flow.confirm(channel, args, None)
        except HumanFailed as exc:
            attack.note(f"no question reached the person ({exc}): refused before asking")
            return
        if channel.taken == taken:
            # The call was over before the person's first step could be taken: nobody was asked.
            attack.note(
                "no question reached the person (the call ended before their first step): refused before asking"
            )
            return
        attack.finding(
            Verdict.WEAK,
            "the person was asked about a path that must never be allowed: refused only after they "
            "could have approved it",
        )
        return
    if flow.kind != "flag":
        shown = await flow.preview(channel, args)
        if shown.handle is None:
            return  # refused at the preview (or acted there, which the oracle sees)
        handle = shown.handle
        attack.finding(
            Verdict.WEAK,
            f"the preview handed out {shown.field or 'a handle'} for a path that must never be allowed: "
            "refused only when confirmed, after a human could have been shown it",
        )
    try:
        await flow.confirm(channel, args, handle)
    except HumanFailed as exc:
        attack.setup_failed(str(exc))
