"""Zero configuration's honest-flow search: when approve did not complete, learn what the server wants.

The harness called the gated tool with values of its own and the server
refused them. The refusal usually says why ("vent must be one of north,
south, roof", "Unknown bed 'x'. List beds first."), and the server holds the
values it wants: its listing tools return them, its creating tools make them.
The search calls the gated tool again, at most `MAX_ATTEMPTS` times, each time
with what the last refusal taught: a value the refusal allows, a value a
listing returned (matched by the argument's name, by the thing listed, or by
its shape), or a subject one of the server's own creating tools made (then a
setup call, made afresh for every use). It stops at the first reply that is not
a refusal (a question, a preview, an answer): the controls then run with what
it learned, exactly as if a profile had named it. It never sends refused
arguments twice, calls only listings (read-only) and creating tools besides the
gated one, and says in one line why it gave up when it does.

A file that grows on every call, refused ones included (an audit log, a
queue), is the server's bookkeeping: learned here, named in the report, and
never taken for the action's effect.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..confirmations import detect, replies, values
from ..confirmations.token import TOKEN_FIELD
from ..models import Outcome, Phase, Response, Said
from ..oracle.grown import files, grown
from ..profile.loader import SetupCall
from ..target import constraints
from ..target.arguments import value_for
from ..target.discovery import HANDLE_NAME, ToolPlan, _in_value, listed_values
from ..target.driver import Connection, ToolInfo
from .action import SetupFailed, prepare, result_value

# Calls of the gated tool one search may make, and calls of listing and creating tools beside them.
MAX_ATTEMPTS = 12
MAX_HELPERS = 12
# A tool that makes a subject, by its name (a prior: it is called only when a refusal says the subject is missing).
CREATES = re.compile(r"create|add|new|make|plant|stage|save|register|open|upload|insert|put|draft|book", re.I)
# A reply that says the world, not the arguments, is in the way.
_WORLD = re.compile(r"\balready\b|\bduplicate\b|\bexists\b|\bno longer\b", re.I)
FreshWorld = Callable[[], Awaitable[tuple[Connection, Path]]]


@dataclass(frozen=True, slots=True)
class Searched:
    """What the search learned: a plan the server stopped refusing (None: gave up), and how it got there."""

    plan: ToolPlan | None
    attempts: tuple[str, ...]
    # Where each argument's value came from ("vent: one of north, south, roof, as set_vent's refusal said").
    sources: Mapping[str, str] = field(default_factory=dict)
    gave_up: str | None = None
    # Files that grew on every call, refused ones included: (pattern, why).
    bookkeeping: tuple[tuple[str, str], ...] = ()
    # The server's words at the step that failed, when it gave up.
    said: str = ""

    def describe(self) -> str:
        head = f"honest-flow search (at most {MAX_ATTEMPTS} calls of the tool): " + (
            f"gave up: {self.gave_up}"
            if self.plan is None
            else "got past the refusals (the approve control says what the call then did)"
        )
        parts = [head, *(f"{arg} from {src}" for arg, src in self.sources.items())]
        parts += [f"{path}: {why}" for path, why in self.bookkeeping]
        return "; ".join(parts) + " | " + " | ".join(self.attempts)


@dataclass
class _State:
    args: dict[str, Any]
    setup: list[SetupCall]
    template: dict[str, Any]
    facets: dict[str, dict[str, Any]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    attempts: list[str] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)
    helpers: int = 0
    grown: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    # By setup step: its maker, and the other values of the closed sets its refusals named.
    others: dict[int, tuple[ToolInfo, str, dict[str, list[Any]]]] = field(default_factory=dict)


def searchable(plan: ToolPlan) -> bool:
    """Only an action that names no file, planned by zero configuration (no profile args)."""
    return plan.path_arg is None and plan.path_styles == ("value",)


async def search(
    plan: ToolPlan,
    tools: Sequence[ToolInfo],
    conn: Connection,
    root: Path,
    seen: Mapping[str, Any],
    fresh: FreshWorld | None = None,
    previewing: Mapping[str, Any] | None = None,
    through: str | None = None,
) -> Searched:
    """Call the gated tool until it asks (or answers without refusing), learning from each refusal.

    `through`: another tool that previews the action (a token flow's preview tool): called in its
    place, its refusals read against its own schema.
    """
    tool = next(t for t in tools if t.name == (through or plan.name))
    props = _with_fields((tool.input_schema or {}).get("properties") or {})
    template = dict(plan.template or {})
    state = _State(
        {k: v for k, v in plan.arguments({}).items() if k not in template}, list(plan.setup), template
    )
    listed = dict(listed_values(tools, seen))
    world_renewed = False
    while len(state.attempts) < MAX_ATTEMPTS:
        sent = json.dumps({**state.args, **state.template}, sort_keys=True, default=str)
        if sent in state.refused:
            return _gave_up(state, "the refusal taught nothing new: the same arguments would be sent again")
        before = files(root)
        try:
            response, used = await _attempt(conn, plan, state, previewing or {}, tool.name)
        except SetupFailed as exc:
            return _gave_up(state, f"a setup call failed: {str(exc)[:200]}")
        _grew(state, before, files(root))
        said = replies.said(response)
        state.attempts.append(
            f"attempt {len(state.attempts) + 1}: {json.dumps(used, default=str)[:160]} -> "
            f"{response.outcome.value}: {response.text[:160]}"
        )
        if response.outcome is Outcome.TRANSPORT:
            return _gave_up(state, "the target stopped answering", response.text)
        # The preview took the subject but handed out no token (`confirmation_token: null`, its
        # blockers said): a subject of another kind may be one it would confirm.
        if (
            through is not None
            and said is not Said.REFUSED
            and values.find(response, None, TOKEN_FIELD) is None
            and (other := await _another_choice(state, conn, listed)) is not None
        ):
            state.attempts[-1] += f" (no token handed out: the setup again with {other})"
            continue
        if said is not Said.REFUSED or detect.from_response(response, tool, tools) is not None:
            return _reached(plan, state)
        if detect.asking_payload(response) is not None:
            return _reached(plan, state)
        state.refused.add(sent)
        text = replies.refusal_text(response) or response.text
        learned = constraints.read(text, {**_fields(state.args), **state.template}, props)
        changed = False
        for found in learned:
            changed = await _apply(found, state, tool, tools, conn, props, listed) or changed
        if not changed and _WORLD.search(text) and fresh is not None and not world_renewed:
            conn, root = await fresh()
            world_renewed, changed = True, True
            state.sources["world"] = (
                "a fresh target process and root (the refusal said the world was in the way)"
            )
        if not changed and (gone := replies.unreachable(response)) is not None:
            why = f"{tool.name} could not reach a service it depends on ({gone!r}): no value of the harness's helps"
            return _gave_up(state, why, text)
        if not changed:
            return _gave_up(state, f"{tool.name}'s refusal names no rule the harness can follow", text)
    return _gave_up(state, f"no call of {plan.name} reached its gate within {MAX_ATTEMPTS} attempts")


async def _attempt(
    conn: Connection, plan: ToolPlan, state: _State, previewing: Mapping[str, Any], called: str
) -> tuple[Response, dict[str, Any]]:
    async def call(step: str, tool: str, args: Mapping[str, Any]) -> Response:
        exchange = await conn.call(Phase.SETUP, f"search: {step}", tool, args)
        return exchange.response

    arguments: dict[str, Any] = dict(state.args)
    if state.setup:
        made = await prepare(call, plan.name, tuple(state.setup), state.template, {})
        arguments = {**state.args, **made.arguments}
    state.calls += 1
    sent = {**arguments, **previewing}
    exchange = await conn.call(Phase.SETUP, f"search: attempt {len(state.attempts) + 1}", called, sent)
    return exchange.response, arguments


async def _apply(
    found: constraints.Constraint,
    state: _State,
    tool: ToolInfo,
    tools: Sequence[ToolInfo],
    conn: Connection,
    props: Mapping[str, Any],
    listed: dict[str, Any],
) -> bool:
    """Change the argument as the refusal says; False when nothing would change."""
    arg = found.arg
    prop = props.get(arg) or {}
    if found.facets.get("x-required") and _get(state.args, arg) is None and arg not in state.template:
        # Its default (null, mostly) is what was refused: a value of its own type instead.
        _put(state.args, arg, value_for(arg, {k: v for k, v in prop.items() if k != "default"}, listed))
        state.sources[arg] = f"{tool.name}'s refusal ({_quoted(found.said)}): the schema left it optional"
        return True
    said_enum, own_enum = found.facets.get("enum"), prop.get("enum")
    if isinstance(said_enum, list) and isinstance(own_enum, list) and not set(said_enum) & set(own_enum):
        return False  # choices none of which the schema allows here: the rule is another argument's
    if found.facets and not found.facets.get("x-required"):
        state.facets[arg] = {**state.facets.get(arg, {}), **found.facets}
        items = prop.get("items") if prop.get("type") == "array" else None
        wanted = {**(items if isinstance(items, Mapping) else prop), **state.facets[arg]}
        chosen = constraints.value(wanted, state.facets[arg])
        if chosen is None:
            chosen = value_for(
                arg, {k: v for k, v in wanted.items() if k not in ("default", "examples")}, None
            )
        if prop.get("type") == "array" and not isinstance(chosen, list):
            chosen = [chosen]  # the rule was each item's
        if chosen != _get(state.args, arg) and arg.split(".")[0] not in state.template:
            _put(state.args, arg, chosen)
            state.sources[arg] = f"{tool.name}'s refusal ({_quoted(found.said)})"
            return True
    if found.listed is None or arg in state.template or "." in arg:
        return False
    thing = found.listed
    lister = _tool_for(tools, thing, tool.name, listing=True)
    if lister is not None and state.helpers < MAX_HELPERS:
        state.helpers += 1
        exchange = await conn.call(Phase.SETUP, f"search: list {thing}", lister.name, {})
        data = result_value(exchange.response)
        picked = _pick(data, arg, thing, prop)
        if picked is not None and picked[0] != state.args.get(arg):
            state.args[arg] = picked[0]
            state.sources[arg] = (
                f"{lister.name} (its {picked[1]!r}, after {tool.name}'s refusal {_quoted(found.said)})"
            )
            return True
    maker = _tool_for(tools, thing, tool.name, listing=False, arg=arg)
    if maker is None or state.helpers >= MAX_HELPERS:
        return False
    made = await _make(maker, thing, state, conn, listed)
    if made is None:
        return False
    margs, data, ruled, others = made
    picked = _pick(data, arg, thing, prop)
    if picked is None:
        return False
    dotted = _in_value(data, picked[1]) or picked[1]
    # A value a refusal ruled on ("kind must be 'db' or 'config'") is never varied to make another use.
    state.setup.append(SetupCall(maker.name, margs, {arg: dotted}, frozenset(ruled)))
    state.others[len(state.setup) - 1] = (maker, thing, others)
    state.template[arg] = f"{{{arg}}}"
    state.args.pop(arg, None)
    state.sources[arg] = (
        f"setup: {maker.name} makes a {thing} for every use (its {dotted!r}); {tool.name} said {_quoted(found.said)}"
    )
    return True


async def _another_choice(state: _State, conn: Connection, listed: Mapping[str, Any]) -> str | None:
    """Make the subject again with the next value of a closed set a maker's refusal named; what was changed."""
    for index, (maker, thing, others) in state.others.items():
        for arg, choices in others.items():
            while choices:
                choice = choices.pop(0)
                step = state.setup[index]
                # Afresh from its required arguments: what the other kind needed ("db proposals require
                # `sql`") is no argument of this one, and would show as one in what the person reads.
                schema = maker.input_schema or {}
                start = {k: v for k, v in step.args.items() if k in (schema.get("required") or ())}
                made = await _make(maker, thing, state, conn, listed, {**start, arg: choice}, {arg})
                if made is None:
                    continue
                margs, _, ruled, more = made
                state.setup[index] = SetupCall(step.tool, margs, step.save, frozenset({*step.fixed, *ruled}))
                for name, rest in more.items():
                    if name != arg:
                        others.setdefault(name, rest)
                key = f"{maker.name}'s arguments"
                state.sources[key] = f"{state.sources.get(key, 'its refusals')}; then {arg}={choice!r}"
                return f"{maker.name}'s {arg}={choice!r}"
    return None


async def _make(
    maker: ToolInfo,
    thing: str,
    state: _State,
    conn: Connection,
    listed: Mapping[str, Any],
    start: Mapping[str, Any] | None = None,
    ruled_already: Collection[str] = (),
) -> tuple[dict[str, Any], Any, set[str], dict[str, list[Any]]] | None:
    """Call the creating tool until it makes the subject, each refusal read as the gated tool's are.

    Its required arguments first; a value its refusal rules on ("kind must be 'db' or 'config'"),
    or one its schema left optional that the refusal says it needs ("config proposals require
    `path`"), then as that refusal says. Its arguments, result and the arguments a refusal ruled on
    (None: it never made one).
    """
    schema = maker.input_schema or {}
    mprops = _with_fields(schema.get("properties") or {})
    margs: dict[str, Any] = (
        dict(start)
        if start is not None
        else {k: value_for(k, mprops.get(k) or {}, listed) for k in schema.get("required") or ()}
    )
    tried: set[str] = set()
    ruled: set[str] = set(ruled_already)
    others: dict[str, list[Any]] = {}
    while state.helpers < MAX_HELPERS:
        state.helpers += 1
        tried.add(json.dumps(margs, sort_keys=True, default=str))
        exchange = await conn.call(Phase.SETUP, f"search: make a {thing}", maker.name, margs)
        response = exchange.response
        if replies.said(response) is not Said.REFUSED:
            return margs, result_value(response), ruled, others
        text = replies.refusal_text(response) or response.text
        for found in constraints.read(text, margs, mprops):
            ruled.add(found.arg)
            prop = {k: v for k, v in (mprops.get(found.arg) or {}).items() if k != "default"}
            if found.facets.get("x-required"):
                if margs.get(found.arg) in (None, "", 0, [], {}):
                    margs[found.arg] = value_for(found.arg, prop, listed)
                continue
            if found.arg in ruled_already:
                continue  # the value another kind was tried with: kept
            wanted = {**prop, **found.facets}
            chosen = constraints.value(wanted, found.facets)
            if chosen is None:
                chosen = value_for(found.arg, {k: v for k, v in wanted.items() if k != "examples"}, None)
            margs[found.arg] = chosen
            if isinstance(enum := found.facets.get("enum"), list):
                others[found.arg] = [v for v in enum if v != chosen]
        state.sources[f"{maker.name}'s arguments"] = f"its refusals ({_quoted(text)})"
        if json.dumps(margs, sort_keys=True, default=str) in tried:
            return None
    return None


def _with_fields(props: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's arguments, and the fields of each object argument as `arg.field`: a rule may be about one.

    "store 'x' is not valid in partition 'dev' (valid: knowledge, ...)" is about `note.store`, a
    field of the object argument `note` (magnemo-mcp's `stage`): read and applied there.
    """
    found = dict(props)
    for name, prop in props.items():
        fields = prop.get("properties") if isinstance(prop, Mapping) else None
        if isinstance(fields, Mapping):
            found.update({f"{name}.{k}": v for k, v in fields.items() if isinstance(v, Mapping)})
    return found


def _fields(args: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as sent, and each object argument's fields as `arg.field` beside them."""
    found = dict(args)
    for name, value in args.items():
        if isinstance(value, Mapping):
            found.update({f"{name}.{k}": v for k, v in value.items()})
    return found


def _get(args: Mapping[str, Any], arg: str) -> Any:
    top, _, sub = arg.partition(".")
    value = args.get(top)
    return (value.get(sub) if isinstance(value, Mapping) else None) if sub else value


def _put(args: dict[str, Any], arg: str, value: Any) -> None:
    top, _, sub = arg.partition(".")
    if not sub:
        args[top] = value
        return
    held = args.get(top)
    args[top] = {**(held if isinstance(held, Mapping) else {}), sub: value}


def _tool_for(
    tools: Sequence[ToolInfo], thing: str, gated: str, *, listing: bool, arg: str = ""
) -> ToolInfo | None:
    """A listing (read-only, no required argument) or a creating tool named for `thing`.

    A creating tool may instead say it in its description: "Returns a proposal_id you pass to
    apply_change" names the very argument the refusal was about (`_RETURNS`).
    """
    names = (thing, f"{thing}s", f"{thing[:-1]}ies" if thing.endswith("y") else f"{thing}es")
    for other in tools:
        named = any(n in other.name.lower() for n in names)
        # A listing whose description says what its rows are for ("use the returned name as the recipient").
        said = listing and re.search(rf"\b{re.escape(thing)}\b", other.description or "", re.I) is not None
        returns = not listing and bool(arg) and _returns(other, arg)
        if other.name == gated or not (named or said or returns):
            continue
        required = (other.input_schema or {}).get("required")
        if listing and other.read_only is True and not required:
            return other
        if not listing and other.read_only is not True and (returns or CREATES.search(other.name)):
            return other
    return None


def _returns(tool: ToolInfo, arg: str) -> bool:
    """Whether `tool`'s description says it returns (makes, hands out) `arg`: "Returns a proposal_id"."""
    said = tool.description or ""
    verb = r"\b(?:returns?|mints?|hands? (?:out|back)|gives?(?: back)?|creates?)\b"
    return re.search(rf"{verb}[^.\n]{{0,40}}(?<![\w]){re.escape(arg)}(?![\w])", said, re.I) is not None


def _pick(data: Any, arg: str, thing: str, prop: Mapping[str, Any]) -> tuple[Any, str] | None:
    """A value for `arg` in a result: by its name, by the thing's own id or name, by its shape."""
    keys = (arg, f"{thing}_id", f"{thing}Id", "id", f"{thing}_name", "name", "key", "slug", thing)
    rows = list(_rows(data, 0))
    for key in keys:
        for row in rows:
            value = row.get(key)
            if _usable(value) and _fits(value, prop):
                return value, key
    for row in rows:  # by shape: any id-like field that fits the argument's schema
        for key, value in row.items():
            if HANDLE_NAME.search(str(key)) and _usable(value) and _fits(value, prop):
                return value, str(key)
    return None


def _rows(value: Any, depth: int) -> Any:
    if depth > 4:
        return
    if isinstance(value, Mapping):
        yield value
        for inner in value.values():
            yield from _rows(inner, depth + 1)
    elif isinstance(value, list):
        for inner in value[:20]:
            yield from _rows(inner, depth + 1)


def _usable(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and str(value) != ""


def _fits(value: Any, prop: Mapping[str, Any]) -> bool:
    kind = prop.get("type")
    if kind == "integer":
        return isinstance(value, int)
    if kind == "string":
        return isinstance(value, str)
    return True


def _quoted(said: str) -> str:
    return json.dumps(said[:120])


def _grew(state: _State, before: Mapping[str, bytes], after: Mapping[str, bytes]) -> None:
    """Count the files this call only appended to (a new file counts as grown from nothing)."""
    for name in grown(before, after)[0]:
        state.grown[name] = state.grown.get(name, 0) + 1


def _logs(state: _State) -> tuple[tuple[str, str], ...]:
    """Files that grew on every call of the tool (two at least, a refused one among them): bookkeeping."""
    calls = len(state.attempts)
    if calls < 2 or not state.refused:
        return ()
    return tuple(
        (name, f"grew on every one of {calls} calls, refused ones included: bookkeeping (a log or a queue)")
        for name, count in sorted(state.grown.items())
        if count >= calls
    )


def _reached(plan: ToolPlan, state: _State) -> Searched:
    from dataclasses import replace

    logs = _logs(state)
    notes = tuple(f"{arg}: from {src}" for arg, src in state.sources.items())
    learned = replace(
        plan,
        extra_args={k: v for k, v in state.args.items() if k not in state.template},
        template=dict(state.template) or None,
        setup=tuple(state.setup),
        ignore=(*plan.ignore, *(name for name, _ in logs)),
        notes=(*plan.notes, *notes),
        bookkeeping_notes=(*plan.bookkeeping_notes, *logs),
        learned={**plan.learned, **{arg: dict(facets) for arg, facets in state.facets.items()}},
    )
    return Searched(learned, tuple(state.attempts), dict(state.sources), None, logs)


def _gave_up(state: _State, why: str, said: str = "") -> Searched:
    return Searched(None, tuple(state.attempts), dict(state.sources), why, _logs(state), said[:300])
