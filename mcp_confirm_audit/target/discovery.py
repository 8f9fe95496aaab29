"""Zero configuration: which tools to attack, with what arguments, and where their effect may show.

A candidate is any tool not declared read-only; the approve control tells
whether it asks, acts without asking, or refuses the harness's arguments.
Whether a path is root-relative, absolute, or not a file at all is learned
from the honest flow too, because a schema rarely says. A required argument
another tool returns a field of the same name for is a handle: that tool is
called first. Read-only tools with no required arguments are effect probes
to try around the approve control.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..confirmations import Mechanism
from ..confirmations.detect import from_schemas
from ..confirmations.token import Token
from ..errors import TargetError, UsageError
from ..models import Outcome, Phase, Response
from ..oracle.effects import ProbeSpec
from ..profile.loader import Approver, DriftCall, Profile, SetupCall
from .arguments import holds_command_line, value_for
from .driver import Connection, ToolInfo

_PATHLIKE_NAME = re.compile(r"path|file|target|document|doc\b|dest|src|source|location|uri|name", re.I)
_PATHLIKE_TEXT = re.compile(r"\b(path|file|filename|directory|folder)\b", re.I)
_STRONG_NAME = re.compile(r"path|file", re.I)


@dataclass(frozen=True, slots=True)
class ToolPlan:
    """How to call one tool under attack: the action, and how to see that it happened."""

    name: str
    # The argument that names a case file; None for an action that names none.
    path_arg: str | None
    extra_args: Mapping[str, Any] = field(default_factory=dict)
    destructive: bool | None = None
    # How the honest flow may name the case file; "value" (no file at all) is
    # tried last when the path argument was only guessed.
    path_styles: tuple[str, ...] = ("relative", "absolute")
    setup: tuple[SetupCall, ...] = ()
    # The gated call's arguments ({NAME} from setup, {path}, {sink}); None: the
    # path argument plus harmless values for the rest.
    template: Mapping[str, Any] | None = None
    # Effect probes the profile declares, and read-only tools zero configuration
    # will try around the approve control (those whose result changes are kept).
    probes: tuple[ProbeSpec, ...] = ()
    candidate_probes: tuple[ProbeSpec, ...] = ()
    ignore: tuple[str, ...] = ()
    # Why this plan looks the way it does (a handle found in another tool's output).
    notes: tuple[str, ...] = ()

    def arguments(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The gated call's argument template with everything but setup's names filled in."""
        if self.template is not None:
            return {**self.extra_args, **self.template}
        return dict(self.extra_args)

    # How it confirms, when the profile or the schema says; else the controls find out.
    mechanism: Mechanism | None = None
    # Agent-callable tools that change the gate's rules, as the profile names them
    # (None: found from the tools' schemas; (): none, the family is off).
    policy_tools: tuple[str, ...] | None = None
    # The call that changes the subject after the question, as the profile declares it (subject-drift).
    drift: DriftCall | None = None
    # Where the tool takes who approves from the call, as the profile says (approver-substitution).
    approver: Approver | None = None
    # Bookkeeping zero configuration learned before the controls, and why (a log grown by every call).
    bookkeeping_notes: tuple[tuple[str, str], ...] = ()
    # Arguments of the template the profile wrote through a placeholder: never varied (`Profile.fixed_args`).
    fixed: frozenset[str] = frozenset()
    # Schema facets a refusal taught zero configuration, by argument ("tanks: rain, well": an enum):
    # another use of the action is varied within them (`engine.action.varied`), as within the schema's.
    learned: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Another record's fields the stage call can state in place of the item's own (stage-time-fields).
    stage_as: Mapping[str, Any] = field(default_factory=dict)
    # The case file's path goes into a command line (`rm {path}`): one word for the shell, quoted, so a
    # hostile name's blank, newline or `<` stays part of the name (unless the line quotes it itself).
    path_quoted: bool = False
    # The path goes into a command line the tool runs (`rm {path}`), and the profile does not say the
    # tool confines the paths in its lines (`confines_paths`): which file the line reaches is the shell's.
    path_in_command: bool = False
    # Zero configuration's plan had the tool not taken a command line (its filler for the line): what the
    # controls try when `rm` of the case file moved nothing (a controller's `vent north 30`, no shell).
    without_command_action: ToolPlan | None = None

    def placed(self, path: str) -> str:
        """A path as the template's `{path}` takes it: quoted as one shell word in a command line."""
        return shlex.quote(path) if self.path_quoted else path


# What zero configuration runs through a tool that takes a command line: the file action the
# harness audits everywhere (deleting a case file it made in the sandbox), so its effect is one
# the sandbox shows. A made-up command ("mcp-confirm-audit") is no program: nothing would move.
COMMAND_ACTION = "rm {path}"


def command_line_argument(tool: ToolInfo) -> str | None:
    """The string argument of `tool` that holds a command line, a required one first; None when none does."""
    schema = tool.input_schema or {}
    props = schema.get("properties") or {}
    required = schema.get("required") or ()
    found = [
        name
        for name, prop in props.items()
        if isinstance(prop, Mapping) and prop.get("type") == "string" and holds_command_line(name, prop)
    ]
    found.sort(key=lambda name: name not in required)
    return found[0] if found else None


def path_argument(tool: ToolInfo) -> str | None:
    props = (tool.input_schema or {}).get("properties") or {}
    strings = [k for k, v in props.items() if isinstance(v, Mapping) and v.get("type") == "string"]

    def score(key: str) -> int:
        prop = props[key]
        text = f"{prop.get('title', '')} {prop.get('description', '')}"
        return (
            2 * bool(_STRONG_NAME.search(key))
            + bool(_PATHLIKE_NAME.search(key))
            + bool(_PATHLIKE_TEXT.search(text))
        )

    ranked = sorted((k for k in strings if score(k) > 0), key=score, reverse=True)
    return ranked[0] if ranked else None


def filler(prop: Mapping[str, Any], name: str = "", listed: Mapping[str, Any] | None = None) -> Any:
    """A schema-valid, harmless value for an argument the harness has no reason to choose.

    What the schema offers first (const, default, examples, enum), then what
    its format, pattern and name say it looks like (see `arguments`); numbers
    are small and positive, never 0, which real tools refuse ("amount must be
    positive") before they ever ask.
    """
    return value_for(name, prop, listed)


# Read-only tools tried as effect probes around the approve control, at most.
MAX_CANDIDATE_PROBES = 4


def plan_tools(
    tools: Sequence[ToolInfo], profile: Profile, seen: Mapping[str, Any] | None = None
) -> list[ToolPlan]:
    """One plan per tool to audit; `seen`: what the look around returned, by tool (see `look_around`)."""
    by_name = {t.name: t for t in tools}
    seen = seen or {}
    if profile.tool is not None:
        if profile.tool not in by_name:
            raise UsageError(
                f"{profile.source}: tool {profile.tool!r} is not offered by the target; "
                f"it offers: {', '.join(sorted(by_name)) or 'no tools'}"
            )
        candidates = [by_name[profile.tool]]
    else:
        candidates = [t for t in tools if t.read_only is not True]
    if profile.drift is not None and profile.drift.tool not in by_name:
        raise UsageError(
            f"{profile.source}: drift tool {profile.drift.tool!r} is not offered by the target; "
            f"it offers: {', '.join(sorted(by_name)) or 'no tools'}"
        )
    for step in profile.setup:
        if step.tool not in by_name:
            raise UsageError(
                f"{profile.source}: setup tool {step.tool!r} is not offered by the target; "
                f"it offers: {', '.join(sorted(by_name)) or 'no tools'}"
            )
    probes_to_try = tuple(
        ProbeSpec("tool", f"tool:{t.name}", {"tool": t.name, "args": {}})
        for t in tools
        if t.read_only is True and not (t.input_schema or {}).get("required")
    )[:MAX_CANDIDATE_PROBES]
    plans = [_plan(tool, tools, profile, probes_to_try, seen) for tool in candidates]
    if not plans:
        offered = ", ".join(sorted(by_name)) or "none"
        raise TargetError(
            f"the target offers no tool to audit (tools: {offered}); every tool is declared read-only: "
            "name one in a profile with 'tool:'"
        )
    return plans


def _plan(
    tool: ToolInfo,
    tools: Sequence[ToolInfo],
    profile: Profile,
    probes_to_try: tuple[ProbeSpec, ...],
    seen: Mapping[str, Any],
    *,
    command_action: bool = True,
) -> ToolPlan:
    listed = listed_values(tools, seen)
    props = (tool.input_schema or {}).get("properties") or {}
    required = (tool.input_schema or {}).get("required") or []
    styles = ("relative", "absolute") if profile.paths == "auto" else (profile.paths,)
    template = dict(profile.args) if profile.args is not None else None
    path_arg = profile.path_arg
    if path_arg is None and template is not None:
        path_arg = next((k for k, v in template.items() if isinstance(v, str) and "{path}" in v), None)
    guessed = zero_config_line = False
    notes_of_plan: tuple[str, ...] = ()
    if path_arg is None and template is None and not profile.setup:
        if command_action and (command := command_line_argument(tool)) is not None:
            # A shell tool's action, with a file the harness made as its subject (`COMMAND_ACTION`).
            path_arg, template, zero_config_line = command, {command: COMMAND_ACTION}, True
            notes_of_plan = (
                f"{command!r} takes a command line: the action is {COMMAND_ACTION!r} on the case file, its path "
                "quoted as one word (write args: in a profile for another command)",
            )
        else:
            path_arg, guessed = path_argument(tool), True
    setup: tuple[SetupCall, ...] = profile.setup
    notes: tuple[str, ...] = ()
    if not setup and template is None:
        setup, template, notes = _handles(tool, tools, path_arg, seen, listed)
    notes = (*notes_of_plan, *notes)
    mechanism = _mechanism(tool, tools, profile, template)
    named = set(template or {}) | ({path_arg} if path_arg else set())
    extra: dict[str, Any] = {}
    if isinstance(mechanism, Token) and mechanism.preview_tool is not None and profile.confirmation is None:
        # The preview tool describes the action (`preview_email(to, subject, ...)`): its arguments too; the
        # token is the flow's own, never a filler.
        named |= set(mechanism.carries)
        shown = next((t for t in tools if t.name == mechanism.preview_tool), None)
        schema = (shown.input_schema or {}) if shown is not None else {}
        extra = {
            k: filler((schema.get("properties") or {}).get(k) or {}, k, listed)
            for k in schema.get("required") or ()
            if k not in named
        }
    extra.update({k: filler(props.get(k) or {}, k, listed) for k in required if k not in named})
    extra.update(profile.extra_args)
    if path_arg is None:
        styles = ("value",)
    elif guessed and profile.tool is None:
        styles = (*styles, "value")
    line = template.get(path_arg) if path_arg is not None and template is not None else None
    runs_the_path = _runs_the_path(line, holds_command_line(str(path_arg), props.get(path_arg)))
    # One shell word, whoever wrote the line, unless the line quotes {path} itself ('{path}').
    quoted = runs_the_path and not re.search(r"""['"]\{path\}['"]""", str(line))
    probes = tuple(profile.effect)
    # A profile that says where the effect shows is taken at its word; only zero configuration learns.
    candidates = () if probes else probes_to_try
    return ToolPlan(
        tool.name,
        path_arg,
        extra,
        tool.destructive,
        styles,
        setup,
        template,
        probes,
        candidates,
        tuple(profile.ignore),
        notes,
        mechanism,
        profile.policy_tools,
        profile.drift,
        profile.approver,
        fixed=profile.fixed_args,
        stage_as=profile.stage_as,
        path_quoted=quoted,
        path_in_command=runs_the_path and not profile.confines_paths,
        without_command_action=(
            _plan(tool, tools, profile, probes_to_try, seen, command_action=False)
            if zero_config_line
            else None
        ),
    )


def _runs_the_path(value: Any, command_line: bool) -> bool:
    """Whether a template's value puts `{path}` into a command line (`rm {path}`), not only names the file."""
    return command_line and isinstance(value, str) and "{path}" in value and value.strip() != "{path}"


def _mechanism(
    tool: ToolInfo, tools: Sequence[ToolInfo], profile: Profile, template: Mapping[str, Any] | None
) -> Mechanism | None:
    """The schema's guess, unless the profile's own arguments already fill the token it guessed.

    A profile that sets `confirmation_token: "{token}"` from a setup call has made the
    preview a setup step: the gated call is the confirming one, and round one says the rest.
    """
    found = from_schemas(tool, profile.confirmation, tools)
    filled = {*(template or {}), *profile.extra_args}
    if profile.confirmation is None and isinstance(found, Token) and found.into in filled:
        return None
    return found


def _handles(
    tool: ToolInfo,
    tools: Sequence[ToolInfo],
    path_arg: str | None,
    seen: Mapping[str, Any],
    listed: Mapping[str, Any],
) -> tuple[tuple[SetupCall, ...], dict[str, Any] | None, tuple[str, ...]]:
    """Required arguments another tool returns a field of that name for: handles minted by that tool.

    The other tool may be declared read-only or not (a planner that only
    computes a plan still mints its `plan_id`); the field may be in its output
    schema, or in what it returned when the harness looked around.
    """
    required = [k for k in (tool.input_schema or {}).get("required") or () if k != path_arg]
    props = (tool.input_schema or {}).get("properties") or {}
    steps: list[SetupCall] = []
    template: dict[str, Any] = {}
    notes: list[str] = []
    for arg in required:
        if any(key in (props.get(arg) or {}) for key in ("default", "const", "enum", "examples")):
            continue  # the schema's own value wins
        found = handle_source(arg, tool, tools, seen)
        if found is None:
            continue
        other, dotted = found
        template[arg] = f"{{{arg}}}"
        same = next((i for i, step in enumerate(steps) if step.tool == other.name), None)
        if same is not None:
            steps[same] = SetupCall(other.name, steps[same].args, {**steps[same].save, arg: dotted})
        else:
            steps.append(SetupCall(other.name, arguments_for(other, None, listed), {arg: dotted}))
        declared = "declared read-only, " if other.read_only is True else ""
        notes.append(
            f"{arg!r} is a handle {other.name!r} ({declared}returns {dotted}): called it first (setup:)"
        )
    if not steps:
        return (), None, ()
    return tuple(steps), template, tuple(notes)


def handle_source(
    arg: str, tool: ToolInfo, tools: Sequence[ToolInfo], seen: Mapping[str, Any]
) -> tuple[ToolInfo, str] | None:
    """The tool that returns a field named `arg` (and the dotted path to it), best first.

    A tool named for the handle (`plan_id`: `plan_to_pose`) before any other;
    one that takes arguments (it mints) before a listing; the output schema
    before what a result happened to carry.
    """
    stem = _stem(arg)
    handle_like = HANDLE_NAME.search(arg) is not None
    ranked: list[tuple[int, int, ToolInfo, str]] = []
    for order, other in enumerate(tools):
        if other.name == tool.name:
            continue
        if not handle_like and (other.read_only is True or other.output_schema is None):
            continue  # a plain value (an amount) is a handle only where a minting tool's schema says so
        dotted = _in_schema(other.output_schema or {}, arg)
        from_schema = dotted is not None
        if dotted is None and handle_like and other.name in seen:
            dotted = _in_value(seen[other.name], arg)
        if dotted is None:
            continue
        score = (
            4 * bool(stem and stem in other.name.lower())
            + 2 * bool((other.input_schema or {}).get("required"))
            + from_schema
        )
        ranked.append((-score, order, other, dotted))
    if not ranked:
        return None
    _, _, best, dotted = min(ranked, key=lambda r: (r[0], r[1]))
    return best, dotted


# An argument named like a handle: `plan_id`, `orderId`, `ticket_ref`, `uuid`.
HANDLE_NAME = re.compile(r"(^|_)(id|ids|key|ref|handle|uuid)$|[a-z]Id$|^id$", re.I)


def _stem(arg: str) -> str:
    """What a handle is of (`plan_id`: "plan"), to find the tool named for it."""
    return re.sub(r"_?(id|ids|key|ref|handle|uuid)$", "", arg, flags=re.I).lower()


def _in_schema(schema: Mapping[str, Any], name: str, depth: int = 0) -> str | None:
    """The dotted path of property `name` in an output schema (top level, or one object down)."""
    defs = schema.get("$defs") or schema.get("definitions") or {}

    def resolved(prop: Any) -> Mapping[str, Any]:
        ref = prop.get("$ref") if isinstance(prop, Mapping) else None
        if isinstance(ref, str) and ref.rsplit("/", 1)[-1] in defs:
            return defs[ref.rsplit("/", 1)[-1]]  # type: ignore[no-any-return]
        return prop if isinstance(prop, Mapping) else {}

    props = resolved(schema).get("properties") or {}
    if name in props:
        return name
    for key, prop in props.items():
        inner = {**resolved(prop), "$defs": defs}
        if depth < 1 and inner.get("properties") and (found := _in_schema(inner, name, depth + 1)):
            return f"{key}.{found}"
    return None


def _in_value(value: Any, name: str, depth: int = 0) -> str | None:
    """The dotted path of the first non-empty field `name` in a result (through objects and lists)."""
    if depth > 4:
        return None
    if isinstance(value, Mapping):
        if _usable(value.get(name)):
            return name
        for key, inner in value.items():
            if isinstance(inner, Mapping | list) and (found := _in_value(inner, name, depth + 1)):
                return f"{key}.{found}"
    elif isinstance(value, list):
        for index, inner in enumerate(value[:3]):
            if (found := _in_value(inner, name, depth + 1)) is not None:
                return f"{index}.{found}"
    return None


def _usable(value: Any) -> bool:
    """A value the harness may send back: never null, empty or a boolean (`"null"` is no id)."""
    return isinstance(value, str | int | float) and not isinstance(value, bool) and value != ""


def listed_values(tools: Sequence[ToolInfo], seen: Mapping[str, Any]) -> dict[str, Any]:
    """Every field a listing tool (read-only, no required argument) returned, first value wins."""
    listing = {t.name for t in tools if t.read_only is True and not (t.input_schema or {}).get("required")}
    found: dict[str, Any] = {}

    def walk(value: Any, depth: int) -> None:
        if depth > 4:
            return
        if isinstance(value, Mapping):
            for key, inner in value.items():
                if _usable(inner) or (isinstance(inner, list) and inner and all(map(_usable, inner))):
                    found.setdefault(str(key), inner)
            for inner in value.values():
                walk(inner, depth + 1)
        elif isinstance(value, list):
            for inner in value[:3]:
                walk(inner, depth + 1)

    for name in sorted(listing & set(seen)):
        walk(seen[name], 0)
    return found


# Tools looked at before planning, at most: listings first, then read-only tools named for a handle.
MAX_LOOKS = 6


def _data(response: Response) -> Any:
    if response.structured is not None:
        return response.structured
    try:
        return json.loads(response.text)
    except (ValueError, TypeError):
        return None


async def look_around(conn: Connection, tools: Sequence[ToolInfo], profile: Profile) -> dict[str, Any]:
    """Zero configuration: call read-only tools once to learn real values and where handles come from.

    Listing tools (read-only, no required argument) give ids a person would
    pick from (`slot_id` from `list_slots`); then read-only tools named for a
    handle some candidate needs (`plan_to_pose` for `plan_id`), called with
    what the listings gave, show whether their result carries it. Only tools
    declared read-only are called here; the rest are called by the controls.
    """
    if profile.args is not None or profile.setup:
        return {}
    seen: dict[str, Any] = {}
    calls = 0

    async def look(tool: ToolInfo, args: Mapping[str, Any]) -> None:
        nonlocal calls
        calls += 1
        exchange = await conn.call(Phase.SETUP, f"look around: {tool.name}", tool.name, args)
        if exchange.response.outcome is Outcome.COMPLETE and (data := _data(exchange.response)) is not None:
            seen[tool.name] = data

    read_only = [t for t in tools if t.read_only is True]
    for tool in [t for t in read_only if not (t.input_schema or {}).get("required")][:MAX_LOOKS]:
        await look(tool, {})
    listed = listed_values(tools, seen)
    candidates = (
        [t for t in tools if t.read_only is not True]
        if profile.tool is None
        else [t for t in tools if t.name == profile.tool]
    )
    wanted = {
        arg
        for t in candidates
        for arg in (t.input_schema or {}).get("required") or ()
        if arg not in listed and handle_source(arg, t, tools, seen) is None
    }
    stems = {_stem(arg) for arg in wanted if HANDLE_NAME.search(arg)}
    for tool in read_only:
        if calls >= MAX_LOOKS or tool.name in seen or not (tool.input_schema or {}).get("required"):
            continue
        if any(stem and stem in tool.name.lower() for stem in stems):
            await look(tool, arguments_for(tool, None, listed))
    return seen


def arguments_for(
    tool: ToolInfo, path_value: str | None, listed: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Arguments for any tool: its path-like argument names the file, the rest are harmless."""
    props = (tool.input_schema or {}).get("properties") or {}
    required = (tool.input_schema or {}).get("required") or []
    args = {k: filler(props.get(k) or {}, k, listed) for k in required}
    if path_value is not None and (path_arg := path_argument(tool)) is not None:
        args[path_arg] = path_value
    return args
