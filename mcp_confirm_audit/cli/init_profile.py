"""`mcp-confirm-audit init CMD`: a profile drafted from what discovery found.

It starts the target, lists its tools, picks the ones zero configuration
would attack, and runs the honest approve flow to learn whether paths are
relative to the root or absolute. The result is YAML for a person to review.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import yaml

from ..catalogue.loader import load_catalogue
from ..channels.human import CHANNELS_PAGE
from ..confirmations.replies import clipped
from ..engine.controls import ACTED_UNASKED, ControlOutcome
from ..engine.session import AuditSession
from ..models import Outcome
from ..oracle.effects import ProbeSpec
from ..profile import headers as http_headers
from ..profile.headers import Header
from ..profile.loader import Profile, resolve_profile
from ..target.discovery import ToolPlan, listed_values

# How an evidence line says the target asked (verdict.describe).
_ASKED = f"<- {Outcome.INPUT_REQUIRED.value}"
# Where what a tool accepts is written into a profile: a file action's argument, any other action's
# arguments, the form's values for yes.
PATH_PAGE = "docs/profile.md, the key path_arg"
ARGUMENTS_PAGE = 'docs/how-to/actions.md, "Say it in a profile"'
ANSWER_PAGE = "docs/profile.md, the key answer"
# A tool that acted with nobody asked may ask only in a mode of the server's or for some uses (every change
# waits once the person turned approval on; only a record the person wrote waits): nothing in its schema
# says which, so the draft says where that goes.
UNASKED_FIX = (
    "it acted with nobody asked: if the server asks only in some mode or for some uses (a setting that makes "
    "every change wait, a record only the person may change), start it in that mode (command:) or make that "
    f"use (args:, setup:); see {ARGUMENTS_PAGE}"
)
# The characters of a failed control's detail a line of the draft quotes (the report's headline quotes as many).
_WHY = 200


def _comment(text: str) -> list[str]:
    """Every line of `text` as a YAML comment: a detail with line breaks must not break the profile."""
    return [f"# {line}".rstrip() for line in text.splitlines() or [""]]


def _as_profile_entry(spec: ProbeSpec) -> dict[str, Any] | None:
    """A learned effect probe as the profile's `effect:` writes it (zero configuration learns tools and files)."""
    name = spec.name.split(":", 1)[1]
    if spec.kind == "tool":
        args = spec.options.get("args") or {}
        return {"tool": {"name": name, "args": dict(args)} if args else name}
    if spec.kind == "file":
        return {"file": name}
    return None


def _as_written(given: str, header: Header) -> str:
    """A header's value as the draft writes it: `${NAME}` as given, never a credential typed in."""
    value = given.partition(":")[2].strip()
    if "${" in value:
        return value
    scheme = header.redacted.partition(": ")[2].removesuffix(http_headers.MASK).strip()
    variable = re.sub(r"[^A-Za-z0-9]+", "_", header.name).strip("_").upper() or "TOKEN"
    return f"{scheme} ${{{variable}}}".strip()


def draft_profile(command: str, root_from: str | None = None, headers: Sequence[str] = ()) -> str:
    """The profile drafted for `command`; `headers` ('Name: value', `${NAME}` from the
    environment) are sent to an authenticated server, and written back as `${NAME}`s."""
    parsed = [http_headers.parse(text, source="--header", environ=os.environ) for text in headers]
    profile = resolve_profile(Profile(headers=tuple(parsed)), command, root_from)
    session = AuditSession(profile, load_catalogue())
    session.start()
    try:
        styles = {plan.name: session.controls(plan.name) for plan in session.plans}
        server = session.server_info
        tools, plans, looked = session.tools, session.plans, session.seen
    finally:
        session.close()
    chosen = {plan.name: plan for plan in plans}
    left_out = dict(line.split(": ", 1) for line in session.left_out)
    head = [
        "# Drafted by `mcp-confirm-audit init` from what discovery found: review it before you rely on it.",
        *_comment(
            f"Server: {server.get('name') or 'unnamed'} {server.get('version') or '(version not reported)'}"
        ),
        "# Tools it offers:",
    ]
    for tool in sorted(tools, key=lambda t: t.name):
        if (chosen_plan := chosen.get(tool.name)) is not None and chosen_plan.path_arg is not None:
            why = f"audited (path argument {chosen_plan.path_arg!r})"
        elif chosen_plan is not None:
            seen = ", ".join(spec.name for spec in styles[tool.name].probes) or "nothing yet"
            why = f"audited (names no file; its effect seen through {seen})"
        elif tool.name in left_out:
            # Why the run left it out: a tool with no annotations that calling showed to be a reader says
            # so, never "declared read-only" (it declared nothing).
            why = f"skipped: {left_out[tool.name]}"
        elif tool.read_only is True:
            why = "skipped: declared read-only"
        else:
            why = "skipped: not an action the harness can call"
        head.extend(_comment(f"  {tool.name}: {why}"))
    body: dict[str, Any] = {"name": server.get("name") or "target", "command": command}
    if parsed:
        body["headers"] = {h.name: _as_written(text, h) for text, h in zip(headers, parsed, strict=True)}
        variables = sorted({v for text in body["headers"].values() for v in re.findall(r"\$\{(\w+)\}", text)})
        head.append(
            f"# Headers: export {', '.join(variables)} before the run (init never writes a credential)"
        )
    if profile.root_from != "arg":
        body["root_from"] = profile.root_from
    notes = []
    # One tool audited, or only one whose honest flow completed: the draft is about that one.
    proven = [plan for plan in plans if styles[plan.name].approve_ok]
    single = plans if len(plans) == 1 else proven if len(proven) == 1 else []
    if single:
        plan = single[0]
        if len(plans) > 1:
            notes.append(f"# Only {plan.name}'s honest flow completed: the draft audits it alone.")
        outcome = styles[plan.name]
        if plan.path_arg is not None:
            body.update(tool=plan.name, path_arg=plan.path_arg, paths=outcome.style or "auto")
            if plan.template is not None:
                # The path inside a line of its own (`command: rm {path}`): the draft says the line.
                body["args"] = plan.arguments({})
            elif plan.extra_args:
                body["extra_args"] = dict(plan.extra_args)
        else:
            # An action that names no file: its arguments, its setup, and where its effect shows.
            body.update(tool=plan.name, args=plan.arguments({}))
            if plan.setup:
                body["setup"] = [
                    {"tool": step.tool, "args": dict(step.args), "save": dict(step.save)}
                    for step in plan.setup
                ]
            effect = [entry for spec in outcome.probes if (entry := _as_profile_entry(spec)) is not None]
            if effect:
                body["effect"] = effect
        if outcome.bookkeeping and outcome.approve_ok:
            # What changes without the action, as the controls learned it: never read as its effect.
            body["ignore"] = sorted(set(outcome.bookkeeping))
        if outcome.mechanism is not None and outcome.mechanism.kind != "mrtr":
            notes.append(f"# It confirms another way than MRTR: {outcome.mechanism.describe()}")
        if not outcome.approve_ok:
            notes.extend(_failed(outcome))
            notes.append("# Until it works every attack is inconclusive.")
            if any(_ASKED in line for line in outcome.evidence):
                # It asked, and the harness's answer did not act: the form may want other values.
                notes.append("# It asked: an 'answer:' template (the form's values for yes) may help.")
        text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=2**16)
        text = _annotated(text, _sources(plan, outcome, listed_values(tools, looked)))
    else:
        notes.append(f"# Zero configuration audits all {len(plans)} tools above; set 'tool:' to audit one.")
        notes.extend(_failed_flows(plans, styles))
        text = yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=2**16)
    return "\n".join([*head, *notes]) + "\n" + text


def _sources(plan: ToolPlan, outcome: ControlOutcome, listed: dict[str, Any]) -> dict[str, str]:
    """Where each drafted key's value came from, by the key's path (`args.vent`, `setup`, `effect`)."""
    found: dict[str, str] = {}
    searched = outcome.search
    for arg, source in (searched.sources if searched is not None else {}).items():
        found[f"args.{arg}"] = f"from {source}"
        if source.startswith("setup: "):
            found["setup"] = source
    if plan.path_quoted and plan.path_arg is not None:
        found[f"args.{plan.path_arg}"] = (
            "a command line: zero configuration's file action, rm of the case file (its path quoted as one "
            "word); write another line to audit another command"
        )
    for arg, value in plan.arguments({}).items():
        if arg in listed and listed[arg] == value:
            found.setdefault(f"args.{arg}", "a value the server's listing tools returned under this name")
        found.setdefault(
            f"args.{arg}", "a value zero configuration chose from the schema and the argument's name"
        )
    approve = outcome.results[0]
    if approve.passed:
        found["effect"] = f"what the honest approve control saw change: {approve.detail[:200]}"
    said = (note.split(": ", 1) for note in outcome.bookkeeping_notes if ": " in note)
    notes = dict(plan.bookkeeping_notes) | {name: why for name, why in said}
    if notes:
        found["ignore"] = "; ".join(f"{name}: {why}" for name, why in sorted(notes.items()))[:400]
    return found


def _annotated(text: str, sources: dict[str, str]) -> str:
    """The drafted YAML with a comment above each key saying where its value came from."""
    lines: list[str] = []
    top = ""
    for line in text.splitlines():
        key = line.split(":", 1)[0]
        if line and not line[0].isspace() and ":" in line:
            top = key
            where = sources.get(top)
        elif (
            line.startswith("  ")
            and not line.startswith("   ")
            and ":" in line
            and not key.strip().startswith("-")
        ):
            where = sources.get(f"{top}.{key.strip()}")
        else:
            where = None
        if where:
            indent = line[: len(line) - len(line.lstrip())]
            lines.extend(f"{indent}{comment}" for comment in _comment(_escaped(where)))
        lines.append(line)
    return "\n".join(lines) + "\n"


def _escaped(text: str) -> str:
    """A server's words as a comment can hold them: no control character, no line break, shown as escapes."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _failed(outcome: ControlOutcome) -> list[str]:
    """The one step that failed, the server's words, and the key that fixes it."""
    searched = outcome.search
    detail = outcome.results[0].detail
    lines = _comment(f"The honest approve flow failed: {_escaped(clipped(detail, 600))}")
    if detail.startswith(ACTED_UNASKED):
        lines += _comment(f"Fix: {UNASKED_FIX}")
    if searched is not None and searched.plan is None:
        lines += _comment(f"The honest-flow search gave up: {searched.gave_up}")
        if searched.said:
            lines += _comment(f"The server said: {_escaped(clipped(searched.said, 300))}")
        if CHANNELS_PAGE in detail:
            # The tool refused for want of its person, not of its arguments: the arguments were never the fault.
            lines.append("# Fix: say how the person answers on their own channel (see above), not args:")
        else:
            lines.append(
                "# Fix: set args: (the values the server accepts) and setup: (the calls that make its subject)"
            )
    return lines


def _failed_flows(plans: Sequence[ToolPlan], styles: dict[str, ControlOutcome]) -> list[str]:
    """Each tool whose honest flow failed: the control that failed in its own words, and what to do."""
    failed = [plan for plan in plans if not styles[plan.name].approve_ok]
    if not failed:
        return []
    lines = [
        f"# The honest flow failed on {len(failed)} of {len(plans)} tools: every attack on them is "
        "inconclusive until it works."
    ]
    for plan in failed:
        outcome = styles[plan.name]
        searched = outcome.search
        if searched is not None and searched.plan is None:
            why = f"search: gave up: {searched.gave_up}"
        else:
            why = f"approve: {_reason(outcome.results[0].detail, plan.path_styles)}"
        lines += _comment(f"  {plan.name}: {_escaped(clipped(why, _WHY))}")
        lines += _comment(f"    Fix: {_fix(plan, outcome)}")
    return lines


def _fix(plan: ToolPlan, outcome: ControlOutcome) -> str:
    """What to do about a failed honest flow, and the page that says how."""
    if outcome.results[0].detail.startswith(ACTED_UNASKED):
        return UNASKED_FIX
    if any(CHANNELS_PAGE in control.detail for control in outcome.results):
        # The tool refused for want of its person, not of its arguments: the arguments were never the fault.
        return f"say how the person answers on their own channel; see {CHANNELS_PAGE}"
    if any(_ASKED in line for line in outcome.evidence):
        return f"it asked and the harness's yes did not act: set answer: (the form's values for yes); see {ANSWER_PAGE}"
    if plan.path_arg is not None:
        return f"set path_arg (or args: with {{path}}) to the argument that names the file; see {PATH_PAGE}"
    return (
        "set args: (the values the server accepts) and setup: (the calls that make its subject); "
        f"see {ARGUMENTS_PAGE}"
    )


def _reason(detail: str, styles: Sequence[str]) -> str:
    """The failure in an approve control's detail: a detected flow's begins with how the tool confirms."""
    if detail.startswith(tuple(f"{style}: " for style in styles)):
        return detail
    starts = [at + 2 for style in styles if (at := detail.find(f"; {style}: ")) != -1]
    return detail[min(starts) :] if starts else detail
