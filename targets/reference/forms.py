"""The confirmation forms and the strict reading of their answers.

The SDK does not validate hand-rolled elicitation answers at all, so this module is the
only thing standing between `{"confirm": "false"}` and a deletion.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

FormKind = Literal["boolean", "name", "enum"]
FORMS: tuple[FormKind, ...] = ("boolean", "name", "enum")

_REASON = {"type": "string", "title": "Reason (optional)", "description": "Why this file should go."}
_SECRET = {"type": "string", "title": "API key to continue"}
_NESTED = {
    "type": "object",
    "title": "Options",
    "properties": {"keep_backup": {"type": "boolean", "title": "Keep a backup"}},
}
_DECISIVE: dict[FormKind, tuple[str, dict[str, Any]]] = {
    "boolean": ("confirm", {"type": "boolean", "title": "Delete this file?"}),
    "name": ("confirm_name", {"type": "string", "title": "Type the file's name to confirm"}),
    "enum": ("choice", {"type": "string", "title": "Delete or keep?", "enum": ["delete", "keep"]}),
}


class BadAnswer(Exception):
    """The content does not match the form that was sent."""


def schema(form: FormKind, *, ask_secret: bool = False, nested: bool = False) -> dict[str, Any]:
    field, spec = _DECISIVE[form]
    properties: dict[str, Any] = {field: spec, "reason": _REASON}
    if ask_secret:
        properties["api_key"] = _SECRET  # FLAW asks-for-secret
    if nested:
        properties["options"] = _NESTED  # FLAW nested-form: forms are flat, primitive fields only
    return {"type": "object", "properties": properties, "required": [field]}


def affirmative(form: FormKind, base_name: str) -> dict[str, Any]:
    """The answer a user who says "delete" gives; what the duck-typed-answers flaw assumes."""
    field, _ = _DECISIVE[form]
    return {field: {"boolean": True, "name": base_name, "enum": "delete"}[form]}


def approves(
    form: FormKind,
    content: Mapping[str, Any] | None,
    base_name: str,
    *,
    ask_secret: bool = False,
    nested: bool = False,
    truthy: bool = False,
) -> bool:
    """True if the answer says "delete"; False if it validly says "keep"; else BadAnswer."""
    if not isinstance(content, Mapping):
        raise BadAnswer("the answer has no content")
    allowed = set(schema(form, ask_secret=ask_secret, nested=nested)["properties"])
    unknown = sorted(set(content) - allowed)
    if unknown:
        raise BadAnswer(f"the answer has fields the form did not ask for: {unknown}")
    for optional in ("reason", "api_key"):
        if optional in content and not isinstance(content[optional], str):
            raise BadAnswer(f"{optional!r} must be a string")
    if "options" in content and not isinstance(content["options"], Mapping):
        raise BadAnswer("'options' must be an object")
    field, _ = _DECISIVE[form]
    if field not in content:
        raise BadAnswer(f"the answer is missing {field!r}")
    value = content[field]
    if truthy:
        return bool(value)  # FLAW truthy-strings: "false", "no", 1 and "keep" all count as yes
    if form == "boolean":
        # `is True`/`is False`: a JSON boolean, never 1 or "true".
        if value is True or value is False:
            return value
        raise BadAnswer("'confirm' must be a JSON boolean")
    if form == "name":
        if not isinstance(value, str):
            raise BadAnswer("'confirm_name' must be a string")
        if value != base_name:
            raise BadAnswer("the typed name does not match the file's name")
        return True
    if not isinstance(value, str) or value not in ("delete", "keep"):
        raise BadAnswer("'choice' must be 'delete' or 'keep'")
    return value == "delete"
