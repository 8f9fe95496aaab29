"""`ungated`: another tool of the server moves the gated action's effect without asking, while this one is gated.

Every other tool not declared read-only (never the gated tool's own approve or
execute steps, nor the server's own approve tool for a pending flow that names
none, which is self-approval's to try, nor a pending flow's decline step, nor a
tool that changes the gate's rules: that would loosen the
gate for every later attack) is called once, plainly: with the victim's
path or the action's own values where it takes them, harmless values for the
rest, and what the setup minted for this use (`save:`) where it takes that
by name (a staged note's id for a `keep(note)`: never a made-up one; each
tool given one gets a use of its own). An id the gated call itself mints (a
pending flow's staged id, `invoice_id`) is made the same way: the gated call is
staged plainly, as the honest flow stages it, and a tool taking an argument of
that id's name (as the flow's own execute or approve call gives it, or its
`id_from`; a bare `id_from: saved.id` also names it `memory_id` for a gated
`save_memory`: an id of the thing the gated call makes) gets it, each tool a staging of its
own; an argument taking ids of things gets the ids of the entries where the
gated effect shows that name this subject (a collection's links, for a
`delete_links(link_ids)` beside a gated `delete_collection`), read from the
probes as the attack starts. Those that take this subject or those ids come
first, then those whose name or description shares the effect's nouns, and
destructive ones before others; the tools that make a use of the action (its
setup calls') come last, as staging: only the gated kind of change of theirs
counts, and none is called once another tool has changed something there.
Only a change where the honest approval's effect showed counts (the same
ledger, file or sink, as the controls saw it): the same change there is the
gated harm done around the gate (vulnerable: a `refund_all` emptying the ledger
a gated `refund` empties), another change there is weak (an emptying beside a
gated deletion). A change anywhere else (an emergency stop's own state) is no
finding of this family. Judged from the probes and the sandbox, never from replies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..channels.base import PLACEHOLDER
from ..confirmations import as_flow
from ..confirmations.detect import agent_approver, declining_tools, policy_tools
from ..confirmations.pending import ID_FIELD
from ..engine.action import Instance
from ..models import Verdict
from ..oracle.effects import touched_items, where_of
from ..target.arguments import takes
from ..target.driver import ToolInfo
from . import ANY, technique
from ._flows import AttackChannel
from .base import Attack

# Other tools called, at most: every one is a round trip of its own.
MAX_TOOLS = 6


@technique("ungated", mechanisms=ANY)
async def ungated(attack: Attack, params: Mapping[str, Any]) -> None:
    mechanism = attack.plan.mechanism
    own = set(mechanism.own_tools) if mechanism is not None else set()
    # Rules are policy-self-loosening's to judge, whether the profile names them or their schema does.
    rules = [*policy_tools(attack.tools, attack.plan.policy_tools), *policy_tools(attack.tools)]
    own |= {t.name for t in rules}
    # A pending flow's decline step (`drop(note)` on the person's no) is how the gate says no, never a way
    # around it: called plainly it only does what a decline does, and is judged by the decline control.
    declining = declining_tools(attack.tools, mechanism, attack.plan.name)
    own |= set(declining)
    # The server's own approve tool on the staged id is the agent approving its own request: self-approval.
    if (approver := agent_approver(attack.tools, mechanism, attack.plan.name)) is not None:
        own.add(approver.tool)
    victim = attack.victim
    candidates = [
        t
        for t in attack.tools
        if t.name != attack.plan.name and t.name not in own and t.read_only is not True
    ]
    if not candidates:
        steps = f" but the flow's decline step ({', '.join(declining)})" if declining else ""
        attack.not_applicable(f"no other tool of the target that is not read-only{steps}")
        return
    gated = attack.plan.name
    attack.judged_at_the_gate(Verdict.WEAK, f"another tool acted with no confirmation while {gated} is gated")
    # What the honest approval would touch of this subject, by id, as the probes show it now.
    touched = touched_items(await attack.observe(), attack.gated_places, victim.own_values())
    nouns = _nouns(gated, attack.gated_places, touched)
    # How a use of the action is made (the profile's setup, or the tool that mints its handle).
    staging = {step.tool for step in attack.plan.setup}

    # The id the gated call mints for this use, by the names another tool may take it under.
    names = _staged_id_names(attack)
    staged_id = await _staged(attack) if any(_takes_id(t, names) for t in candidates) else None

    def likeliest(tool: ToolInfo) -> tuple[bool, bool, int, bool]:
        plain = victim.plain_arguments(tool, touched)
        reaches = victim.acted_on_by(tool) or plain != victim.plain_arguments(tool)
        reaches = reaches or bool(_takes_id(tool, names))
        shared = len(nouns & _words(f"{tool.name} {tool.description or ''}"))
        return (tool.name in staging, not reaches, -shared, tool.destructive is not True)

    chosen = sorted(candidates, key=likeliest)[:MAX_TOOLS]
    await attack.start_attack()
    named = False
    spent = False
    given_id = False
    for tool in chosen:
        if tool.name in staging:
            if named:
                break  # another tool's change is the finding: staging must not hide it
            # Made plainly, a use of the action is the harness's own staging, as the attack's setup
            # calls are (they sort last): only the gated kind of change it makes counts.
            attack.stages_at_the_gate()
        subject = victim
        if victim.minted(tool):
            # What the setup minted (a staged note's id) may have been spent by the tool before
            # (`drop(note)`): each tool given it gets a use of its own, made before the mark.
            if spent and (fresh := await attack.again()):
                subject = fresh
            spent = True
        arguments = subject.plain_arguments(tool, touched)
        if tool.name in staging:
            arguments |= _as_set_up(attack, tool.name)
        if taken := _takes_id(tool, names):
            # The gated call's own staged id, never a made-up one: a fresh staging for each tool after
            # the first, since a tool may spend it (post it, cancel it).
            if given_id and (restaged := await _staged(attack)):
                staged_id = restaged
            given_id = given_id or staged_id is not None
            if staged_id is not None:
                arguments |= dict.fromkeys(taken, staged_id)
        since = await attack.mark()
        await attack.call(
            f"{tool.name}, plainly",
            subject,
            arguments=arguments,
            tool=tool.name,
            staging=tool.name in staging,
        )
        acted = f"{tool.name} acted with no confirmation while {gated} is gated"
        if not attack.gated_places:
            if await attack.took_effect(victim, since):
                attack.effect_means(Verdict.WEAK, acted)
                return
            continue
        same, there = attack.at_the_gate(since, await attack.mark())
        if same:
            attack.effect_means(Verdict.WEAK, acted)
            return  # the gated harm itself: nothing more to learn
        if there and not named and tool.name not in staging:
            attack.effect_means(Verdict.WEAK, acted)
            named = True


def _as_set_up(attack: Attack, tool: str) -> dict[str, Any]:
    """The arguments the profile's setup gives `tool`, filled as for a use of the action, where nothing is left open.

    A setup tool made plainly makes a use of the action as the profile does (its home, its folder):
    never a harmless filler the server turns away for being from elsewhere. A value naming what an
    earlier setup call saves is left to the plain arguments.
    """
    step = next(s for s in attack.plan.setup if s.tool == tool)
    filled = attack.filled(step.args, Instance({}, tool))
    return {k: v for k, v in filled.items() if not (isinstance(v, str) and PLACEHOLDER.search(v))}


def _staged_id_names(attack: Attack) -> tuple[frozenset[str], bool]:
    """How the flow names its staged id in its own calls (`invoice_id: "{id}"`, `id_from`); none if it stages nothing.

    A bare `id` (`id_from: saved.id`) names no kind: the id of what the gated call makes is then also
    `<noun>_id` (or `<noun>Id`) for each noun of the gated tool's name (`memory_id` for `save_memory`).
    """
    flow = as_flow(attack.plan.mechanism)
    if flow is None or not flow.stages:
        return frozenset(), False
    known, like_an_id = flow.staged_id_names
    if "id" in known:
        nouns = _words(attack.plan.name)
        known = known | {f"{n}_id" for n in nouns} | {f"{n}id" for n in nouns}
    return known, like_an_id


def _takes_id(tool: ToolInfo, names: tuple[frozenset[str], bool]) -> list[str]:
    """The arguments of `tool` a staged id goes in: those the flow names it by, never a guess at another."""
    known, like_an_id = names
    properties = (tool.input_schema or {}).get("properties") or {}
    return [
        n
        for n, prop in properties.items()
        if (n in known or n.lower() in known or (like_an_id and ID_FIELD.match(n)))
        and isinstance(prop, Mapping)
        and takes(prop, "x")
    ]


async def _staged(attack: Attack) -> str | None:
    """The gated call staged plainly (the honest flow's first step, recorded): the id it minted."""
    flow = as_flow(attack.plan.mechanism)
    assert flow is not None
    shown = await flow.preview(AttackChannel(attack), attack.arguments(attack.victim))
    if shown.handle is None:
        attack.note(f"staging the gated call gave no id to hand to another tool: {shown.response.text[:160]}")
    return shown.handle


def _words(text: str) -> set[str]:
    """The words of a name or description, singular: `delete_links` -> {delete, link}."""
    return {
        w.rstrip("s")
        for w in re.split(r"[^a-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower())
        if len(w) > 2
    }


def _nouns(gated: str, places: tuple[str, ...], touched: Mapping[str, list[Any]]) -> set[str]:
    """What the gated effect is about: its places' fields and lists, the touched kinds, the tool's own words."""
    verbs = {
        "delete",
        "remove",
        "create",
        "update",
        "add",
        "set",
        "get",
        "list",
        "move",
        "send",
        "run",
        "make",
    }
    found = _words(" ".join([*(where_of(p).split(":", 1)[-1] for p in places), *touched]))
    return (found | _words(gated)) - verbs - {"tool", "file", "root", "case"}
