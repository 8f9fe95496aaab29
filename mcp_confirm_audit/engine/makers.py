"""Zero configuration: an action that asks only about what another tool made, and that tool as its setup.

Some gates ask about a subject the action does not make itself: `handoff` asks
the person about every note `stage` left waiting, and with nothing waiting it
answers normally and asks nothing. On a world shared by every attack, the
first yes keeps everything that waited and every later call finds nothing to
ask about: the attacks could not be judged, and a double spend "took effect
once" on an emptied list.

The controls show it from the target's own answers: the approval asked and
acted, yet a refusal control's call neither asked nor acted, in the world
approval left and in a fresh one (`Signatures.unlearned`); or the action never
asked at all (inert). A tool that may make the subject is then tried as a setup
call made before every use of the action (as a profile's `setup:` is): a tool
that is not read-only, named in the action's description or named as making
things. It is kept only when, with it, the controls all ran: every use asked.
A setup call, because a fresh world of such a target holds nothing to ask
about; and a fresh world for every attack on the action besides (as `isolation: process` gives),
because the action takes whatever waits: in a shared world what earlier
attacks left waiting (a declined note stays staged) would be part of the next
attack's subject, and one yes would keep eight notes where the controls
learned that it keeps one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..profile.loader import SetupCall
from ..target.arguments import value_for
from ..target.discovery import ToolPlan
from ..target.driver import ToolInfo
from .controls import ControlOutcome
from .search import CREATES

# Makers one action may try (each a fresh world and the action's controls again).
MAX_MAKERS = 2


def wants_a_subject(outcome: ControlOutcome) -> bool:
    """Whether the controls found nothing to ask about where the action had asked, or ever would."""
    return bool(outcome.signatures.unlearned) or outcome.inert


def candidates(plan: ToolPlan, tools: Sequence[ToolInfo]) -> list[ToolInfo]:
    """Tools that may make the action's subject, at most `MAX_MAKERS`: never a reader, nor the action itself."""
    gated = next((t for t in tools if t.name == plan.name), None)
    described = (gated.description or "").lower() if gated is not None else ""
    found: list[tuple[int, int, ToolInfo]] = []
    for index, tool in enumerate(tools):
        if tool.name == plan.name or tool.read_only is True:
            continue
        stem = re.sub(r"_.*", "", tool.name.lower())  # stage_note -> stage
        named = len(stem) >= 4 and re.search(rf"\b{re.escape(stem)}", described) is not None
        makes = CREATES.search(tool.name) is not None
        if named or makes:
            # Named there and named as a maker first ("every note still staged": stage), then either.
            found.append((0 if named and makes else 1 if named else 2, index, tool))
    return [tool for _, _, tool in sorted(found, key=lambda t: (t[0], t[1]))][:MAX_MAKERS]


def setup_call(maker: ToolInfo, plans: Sequence[ToolPlan], seen: Mapping[str, Any]) -> SetupCall:
    """The maker called as its own plan calls it (what its search learned), else with its required arguments.

    Its arguments are never varied for another use: a value its refusals taught stays as taught.
    """
    own = next((p for p in plans if p.name == maker.name and not p.setup), None)
    if own is not None:
        args = own.arguments({})
    else:
        schema = maker.input_schema or {}
        props = schema.get("properties") or {}
        args = {k: value_for(k, props.get(k) or {}, seen) for k in schema.get("required") or ()}
    return SetupCall(maker.name, args, {}, frozenset(args))


def learned(tool: str, maker: str, outcome: ControlOutcome) -> str:
    """The controls' record of it: what showed the action needed a subject, and which tool made one."""
    if outcome.signatures.unlearned:
        why = f"found nothing to ask about once an approval had used up what waited ({outcome.signatures.unlearned[:200]})"
    else:
        why = f"never asked, and nothing moved ({outcome.results[0].detail[:200]})"
    return (
        f"{tool} {why}; {maker} makes what it asks about: {maker} runs before every use of {tool}, in "
        f"controls and attacks alike (a setup call learned from the target's answers: with it, every "
        f"control asked)"
    )


def isolated(tool: str, maker: str) -> str:
    """The controls' record of the fresh world every attack on `tool` then gets."""
    return (
        f"every attack on {tool} gets a fresh target process and root, and {maker} runs first: {tool} acts "
        f"on whatever waits, so what earlier attacks left waiting would be part of its subject"
    )
