"""`approver-identity`: an approval given by another identity must not count for the person asked.

The person's steps are taken as another of the profile's `principals:` would
take them: every request of theirs (`http:`, `follow:`) carries that
principal's headers, all of its own, in place of the person's (the rest of
each step is the same: the same link, the same body). Then the agent redeems, as after the
person's own approval. A careful approval system checks who approves against
whom it asked, and the action does not happen; an effect is an action
approved by someone who was never asked.

A second paired device (`principals: {NAME: {steps: [...]}}`) is another
identity without headers: its steps read its own credentials (its pairing
code) and take the place of the person's steps that save the same names, so
every signed request of the person's device is made by the other device.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..channels.http import HttpCall
from ..channels.human import Person, Step
from ..confirmations import HumanFailed
from ..profile.headers import Header, as_dict
from . import ANY, technique
from ._elsewhere import redeem
from ._flows import AttackChannel, flow_or_not_applicable, previewed
from .base import Attack


@technique("approver-identity", mechanisms=ANY)
async def approver_identity(attack: Attack, params: Mapping[str, Any]) -> None:
    flow = flow_or_not_applicable(attack, "person's approval to give as another identity")
    if flow is None:
        return
    person = flow.hands_over
    if person is None:
        attack.not_applicable(
            f"nothing is approved by a person on a channel of their own ({flow.describe()}), so no other "
            "identity can approve in their place; a pending or token flow whose profile gives the person's "
            "human: steps is"
        )
        return
    principals, devices = attack.peers.principals, attack.peers.principal_steps
    if not principals and not devices:
        attack.not_applicable(
            "needs another identity of the approval system: add it to the profile as principals: "
            "{mallory: {headers: {Authorization: 'Bearer ${MALLORY_TOKEN}'}}} (the person's own being the "
            "headers: of their http or follow steps), or a second paired device as principals: "
            "{other-phone: {steps: [...]}} (the steps that read its own pairing code)"
        )
        return
    if principals:
        name, theirs = next(iter(principals.items()))
        steps, why = _as_another(person, theirs)
    else:
        name, device = next(iter(devices.items()))
        steps, why = _as_device(person, device)
    if why is not None:
        attack.not_applicable(f"principal {name!r} cannot take the person's steps: {why}")
        return
    channel, victim = AttackChannel(attack), attack.victim
    args = attack.arguments(victim)
    await attack.start_attack()
    shown = await previewed(attack, flow, channel, args)
    if shown is None or shown.handle is None:
        return
    handle = shown.handle
    saved: dict[str, str] = {}
    try:
        saved = await channel.human(
            f"principal {name} approves in the person's place",
            steps,
            {"id": handle, "challenge": handle, "token": handle},
        )
    except HumanFailed as exc:
        attack.note(f"the approval system turned principal {name} away: {exc}")
    if flow.approval_acts_alone:
        return  # the approval acts by itself: any effect is the other identity's approval acting
    call = flow.redemption(args, handle, saved)
    for unfilled in getattr(call[1], "unfilled", ()) if call is not None else ():
        # Turned away, the other identity got no {evidence}: the agent redeems with it empty, never
        # the harness's literal `{evidence}`.
        attack.note(f"principal {name} was given no {{{unfilled}}}: the agent sends it empty")
        saved[unfilled] = ""
    await redeem(flow, channel, args, handle, saved, f"the agent redeems the approval {name} gave")


def _as_another(person: Person, theirs: tuple[Header, ...]) -> tuple[tuple[Step, ...], str | None]:
    """The person's steps with every request sent as the other identity; or why they cannot be."""
    requests = [step for step in person.approve if isinstance(step, HttpCall)]
    if not requests:
        return (), (
            "the person's steps send no request a principal's headers could go on (a command, a "
            "terminal or a signature approves as whoever runs it)"
        )
    if not any(step.headers for step in requests):
        return (), (
            "the person's own requests carry no credentials, so nothing tells the approval system who "
            "approves: give their http or follow steps headers: (their session or token)"
        )
    if all(as_dict(theirs) == as_dict(step.headers) for step in requests):
        return (
            (),
            "its headers are exactly the person's, so it is the person: give it a credential of its own",
        )
    steps = tuple(
        replace(step, headers=theirs) if isinstance(step, HttpCall) else step for step in person.approve
    )
    return steps, None


def _as_device(person: Person, device: tuple[Step, ...]) -> tuple[tuple[Step, ...], str | None]:
    """The person's steps with the other device's credentials read in place of theirs; or why not."""
    names = {n for step in device for n in getattr(getattr(step, "save", None), "names", ())}

    def saves_theirs(step: Step) -> bool:
        return bool(names & set(getattr(getattr(step, "save", None), "names", ())))

    if not any(saves_theirs(step) for step in person.approve):
        return (), (
            f"its steps save {', '.join(sorted(names)) or 'nothing'}, which none of the person's steps save: "
            "they must read the credentials the person's device uses (its pairing code)"
        )
    steps: list[Step] = []
    for step in person.approve:
        if not saves_theirs(step):
            steps.append(step)
        elif not any(s in steps for s in device):
            steps.extend(device)  # where the person reads their own credentials, the other device reads its
    return tuple(steps), None
