"""`out-of-root`: paths the server must never act on, and should never ask about.

Absolute paths outside, `../` traversal, the sibling that shares the root's
name as a prefix, a link in the root that already points outside, the root
itself, a directory, a NUL byte, an overlong path hiding a climb. Asking the user about one
of these and refusing afterwards is weak: the question itself is misleading. So is acting only
on the link that leads out, an entry inside the root, what it leads to untouched (`_links.py`).

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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..confirmations import AgentFlow, HumanFailed, as_flow
from ..confirmations.pending import ID_PATTERN
from ..models import Outcome, Verdict
from ..profile.loader import SetupCall
from . import ANY, technique
from ._flows import AttackChannel
from ._links import LinkAtTheName
from ._params import Params
from ._twins import send_twin
from .base import Attack, Subject


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
    if not attack.resolved_by_the_tool():
        return
    if not attack.names_file:
        await _through_setup(attack, params)
        return
    target = params["target"]
    absolute = attack.style == "absolute"
    value = _hostile(attack, target, params, absolute, attack.path_value)
    if value is None:
        return
    await send_twin(attack, _twin(attack, target, params, absolute, attack.path_value))
    await attack.start_attack()
    if (flow := as_flow(attack.plan.mechanism)) is not None:
        await _over_a_flow(attack, flow, value)
        return
    await _call_and_accept(attack, "name a path that must never be allowed", value)


async def _call_and_accept(attack: Attack, why: str, value: Any) -> None:
    """The hostile call; if it asked, yes, as a user who trusts the dialog would answer."""
    first = await attack.call(why, value)
    if first.outcome is Outcome.INPUT_REQUIRED and first.questions:
        await attack.call(
            "accept the question", value, state=first.request_state, responses=attack.accept(first, value)
        )


def _hostile(
    attack: Attack, target: str, params: Mapping[str, Any], absolute: bool, named: Callable[[Path], str]
) -> str | None:
    """The hostile path, spelled as the call takes paths (`named`); None when not applicable (said why)."""
    case, root = attack.case, attack.sandbox.root
    if target == "absolute-outside":
        return str(case.outside_canary)
    if target == "traversal":
        inner = os.path.relpath(case.outside_canary, root)
        return f"{root}/{inner}" if absolute else inner
    if target == "sibling-prefix":
        if not attack.sandbox.sibling_shares_prefix:
            attack.not_applicable(
                "the target serves a root the harness did not make, and a folder named like it would have "
                "to be written outside the sandbox"
            )
            return None
        return str(case.sibling_canary) if absolute else os.path.relpath(case.sibling_canary, root)
    if target == "link-outside":
        link = case.directory / "link-to-outside.txt"
        link.symlink_to(case.outside_canary)
        # Where the link leads is what the attack is about: only the link moving is judged apart.
        leads_to = LinkAtTheName(
            case.rel(link), case.rel(case.outside_canary), leads_out=True, swapped_in=False
        )
        attack.record(leads_to)
        return named(link)
    if target == "root-itself":
        return str(root) if absolute else "."
    if target == "directory":
        return named(case.directory)
    if target == "nul-byte":
        return named(case.victim) + "\x00.png"
    if target == "overlong":
        # Thousands of "./" then a climb out: length must not smuggle a
        # traversal past checks that give up on long input.
        climb = os.path.relpath(case.outside_canary, root)
        padding = "./" * (int(params.get("length", 3000)) // 2)
        return f"{root}/{padding}{climb}" if absolute else f"{padding}{climb}"
    raise ValueError(f"out-of-root: unknown target {target!r}")


def _twin(
    attack: Attack, target: str, params: Mapping[str, Any], absolute: bool, named: Callable[[Path], str]
) -> str:
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
        return f"{root}/{climb}" if absolute else climb
    if target == "overlong":
        padding = "./" * (int(params.get("length", 3000)) // 2)
        return f"{root}/{padding}{inner}" if absolute else f"{padding}{inner}"
    return named(twin)


def staged_path(setup: Sequence[SetupCall]) -> tuple[int, str, bool] | None:
    """The setup call argument that names the action's file, `{path}` (relative) or `{root}/{path}`.

    Its index, its name, and whether it is absolute; None when no setup call names the file.
    """
    for index, step in enumerate(setup):
        for name, value in step.args.items():
            if value in ("{path}", "{root}/{path}"):
                return index, name, value != "{path}"
    return None


async def _through_setup(attack: Attack, params: Mapping[str, Any]) -> None:
    """The file is named only in a setup call (propose a change to it, then apply it): vary it there.

    The hostile path is staged by that call in the attack proper, and the action's own call
    then carries what the stage minted (the change's id). A stage that refuses the path is
    the refusal (its twin staged and reached the gate); a stage that takes it leaves the
    action to refuse, before asking. A file outside the root changed is the finding.
    """
    where = staged_path(attack.plan.setup)
    if where is None:
        attack.not_applicable(
            f"the out-of-root family needs an argument that names a file, and {attack.plan.name!r} names "
            "none, nor does any of its setup calls (set path_arg, or {path} in args: or in a setup call's "
            "args:, if one does)"
        )
        return
    step, argument, absolute = where
    root = attack.sandbox.root

    def named(path: Path) -> str:
        return str(path) if absolute else os.path.relpath(path, root)

    target = params["target"]
    value = _hostile(attack, target, params, absolute, named)
    if value is None:
        return
    await _setup_twin(attack, step, argument, _twin(attack, target, params, absolute, named))
    await attack.start_attack()
    hostile = await attack.staged_with(step, argument, value)
    if hostile is None:
        return  # the setup call refused the path: its refusal is the attack's last reply
    attack.aimed = hostile
    if (flow := as_flow(attack.plan.mechanism)) is not None:
        await _over_a_flow(attack, flow, hostile)
        return
    await _call_and_accept(attack, "use what was staged with a path that must never be allowed", hostile)


async def _setup_twin(attack: Attack, step: int, argument: str, value: str) -> None:
    """The twin through the setup: the harmless path staged, and the action's call made on what it minted.

    Never judged: its question is cancelled on a legacy connection, its handle never redeemed.
    """
    before = len(attack.exchanged)
    twin = await attack.staged_with(step, argument, value)
    if twin is None:
        attack.benign_twin(value, attack.exchanged[before:], "")
        return
    flow = as_flow(attack.plan.mechanism)
    if flow is None:
        response = await attack.call("benign twin: the action on a harmless path staged the same way", twin)
        asked = response.outcome is Outcome.INPUT_REQUIRED and bool(response.questions)
        attack.benign_twin(
            value, attack.exchanged[before:], "was staged, and its use asked about" if asked else ""
        )
        if asked and attack.primary.legacy:
            await attack.call(
                "cancel the twin's question",
                twin,
                state=response.request_state,
                responses=attack.reply(response, "cancel"),
            )
        return
    if flow.kind in ("waits", "flag"):
        return  # one call is the whole approval: a twin would be the action itself
    shown = await flow.preview(AttackChannel(attack), attack.arguments(twin))
    reached = f"was staged and previewed, and handed {shown.field or 'a handle'}" if shown.handle else ""
    attack.benign_twin(value, attack.exchanged[before:], reached)


async def _over_a_flow(attack: Attack, flow: AgentFlow, value: Subject) -> None:
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
            f"the preview handed out {_handed(shown.field)} for a path that must never be allowed: "
            "refused only when confirmed, after a human could have been shown it",
        )
    try:
        await flow.confirm(channel, args, handle)
    except HumanFailed as exc:
        attack.setup_failed(str(exc))


def _handed(field: str | None) -> str:
    """What a preview handed out, as a reader says it: its field, or a pending id read from its prose."""
    if field == ID_PATTERN:
        return "a pending id (read by the profile's id_pattern)"
    return field or "a handle"
