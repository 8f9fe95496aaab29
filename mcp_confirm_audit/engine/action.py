"""The audited thing is an action: a gated tool, its argument template, and the setup calls before it.

A file action is the special case where one argument names a case file
(`{path}`). Any other action is an `Instance`: the arguments one use of the
action is called with, after its setup calls ran and their results were saved
by name. Everything here is pure except `prepare`, which makes the setup calls
through a function it is given, so the caller records them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..confirmations.values import field_of
from ..models import Outcome, Response
from ..profile.loader import SetupCall

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class Instance:
    """One use of an action that names no file: the arguments the gated tool is called with."""

    arguments: Mapping[str, Any]
    # How evidence and answer templates name it: a saved handle, or the tool's name.
    label: str
    saved: Mapping[str, Any] = field(default_factory=dict)


class SetupFailed(Exception):
    """A setup call did not give what the action needs; the message says which and how to fix it."""


def render(template: Any, values: Mapping[str, Any]) -> Any:
    """The template with `{NAME}` replaced; a value that is only `{NAME}` keeps the saved value's type."""
    if isinstance(template, str):
        whole = _PLACEHOLDER.fullmatch(template)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: str(values.get(m.group(1), m.group(0))), template)
    if isinstance(template, Mapping):
        return {k: render(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [render(v, values) for v in template]
    return template


def result_value(response: Response) -> Any:
    """A result as data: its structured content, else its text read as JSON, else the text."""
    if response.structured is not None:
        return response.structured
    try:
        return json.loads(response.text)
    except (ValueError, TypeError):
        return response.text


def varied(value: Any, variant: int, schema: Mapping[str, Any] | None = None) -> Any:
    """The same kind of value, changed, and still valid for its schema: what makes another action."""
    prop = schema or {}
    if variant == 0 or isinstance(value, bool) or "const" in prop:
        return value
    for listed in ("enum", "examples"):
        options = prop.get(listed)
        if isinstance(options, list) and value in options and len(options) > 1:
            return options[(options.index(value) + variant) % len(options)]
    if isinstance(prop.get("enum"), list):
        return value
    if isinstance(value, int | float):
        least, most = prop.get("minimum"), prop.get("maximum")
        if not isinstance(most, int | float) or value + variant <= most:
            return value + variant
        if isinstance(least, int) and isinstance(most, int) and isinstance(value, int) and least <= value:
            return least + (value - least + variant) % (most - least + 1)  # round within the bounds
        return value - variant
    if isinstance(value, str) and value and not _PLACEHOLDER.search(value):
        return f"{value}-{variant}"
    return value


def varied_args(
    args: Mapping[str, Any], variant: int, schema: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Every plain value changed (saved handles and placeholders are left alone)."""
    props = (schema or {}).get("properties") or {}
    return {k: varied(v, variant, props.get(k)) for k, v in args.items()}


Call = Callable[[str, str, Mapping[str, Any]], Awaitable[Response]]


async def prepare(
    call: Call,
    tool: str,
    setup: tuple[SetupCall, ...],
    template: Mapping[str, Any],
    values: Mapping[str, Any],
    *,
    variant: int = 0,
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
    overrides: Mapping[int, Mapping[str, Any]] | None = None,
) -> Instance:
    """Run the setup calls, save what they name, and render the gated call's arguments.

    `variant` > 0 makes another action of the same tool: the setup calls (or,
    without setup, the arguments themselves) with every plain value changed,
    each within its tool's input schema (`schemas`, by tool name). `overrides`
    sets arguments of setup calls by their index (a hostile memo staged first).
    """
    schemas = schemas or {}
    saved: dict[str, Any] = dict(values)
    for number, step in enumerate(setup, start=1):
        args = render(varied_args(step.args, variant, schemas.get(step.tool)), saved)
        args.update((overrides or {}).get(number - 1, {}))
        response = await call(f"setup {number}: {step.tool}", step.tool, args)
        if response.outcome is not Outcome.COMPLETE:
            raise SetupFailed(
                f"setup call {number} ({step.tool}) did not succeed ({response.outcome}: {response.text[:200]}); "
                "fix its args: under setup: in the profile"
            )
        result = result_value(response)
        for name, dotted in step.save.items():
            try:
                saved[name] = field_of(result, dotted)
            except KeyError:
                raise SetupFailed(
                    f"setup call {number} ({step.tool}) returned no field {dotted!r} to save as {name!r} "
                    f"(it returned {json.dumps(result, default=str)[:200]}); fix save: in the profile"
                ) from None
    arguments = render(template if setup else varied_args(template, variant, schemas.get(tool)), saved)
    handles = [str(saved[k]) for k in saved if k not in values]
    label = handles[0] if handles else tool
    return Instance(arguments, label, {k: v for k, v in saved.items() if k not in values})
