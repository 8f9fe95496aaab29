"""What a human would type into a confirmation form, built from its schema.

The affirmative answer is the honest "yes, do it"; the negative answer is
"no" expressed inside an accepted form (a false box, a "keep" choice, a name
that does not match). A profile's template overrides both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

NEUTRAL_TEXT = "requested by mcp-confirm-audit"
SECRET_DECOY = "not-a-secret"

_YES = re.compile(
    r"\b(yes|confirm\w*|delete|remove|approve\w*|accept|proceed|ok|allow|continue|do it)\b", re.I
)
_NO = re.compile(r"\b(no|cancel|keep|deny|abort|reject|decline|stop)\b", re.I)
_NAME = re.compile(r"name|type the|filename", re.I)
_PATH = re.compile(r"path", re.I)
_SECRET = re.compile(r"password|passphrase|token|api.?key|secret|credential|card|one.?time|otp|pin\b", re.I)


def properties(schema: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    props = (schema or {}).get("properties") or {}
    # A field's schema is a dict: told a Mapping without the ABC's own check (every question passes here).
    return {str(k): v for k, v in props.items() if isinstance(v, dict | Mapping)}


def _options(prop: Mapping[str, Any]) -> list[str]:
    # Every field of every question is read here: a key it lacks is passed by `in`, not looked up.
    if "enum" in prop and isinstance(prop["enum"], list):
        return [str(v) for v in prop["enum"]]
    for key in ("oneOf", "anyOf"):
        if key in prop and isinstance(prop[key], list):
            return [str(o["const"]) for o in prop[key] if isinstance(o, dict | Mapping) and "const" in o]
    items = prop.get("items")
    if items is not None and isinstance(items, dict | Mapping):
        return _options(items)
    return []


def _words(key: str, prop: Mapping[str, Any]) -> str:
    return " ".join(str(x) for x in (key, prop.get("title", ""), prop.get("description", "")))


def _yes(key: str, prop: Mapping[str, Any], name: str, path: str) -> Any:
    kind = prop.get("type")
    options = _options(prop)
    if options:
        chosen = next((o for o in options if _YES.search(o)), options[0])
        return [chosen] if kind == "array" else chosen
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return prop.get("default", prop.get("minimum", 1))
    words = _words(key, prop)
    if _SECRET.search(words):
        # Never hand a server anything that looks like a real secret.
        return SECRET_DECOY
    if _NAME.search(words):
        return name
    if _PATH.search(words):
        return path
    return NEUTRAL_TEXT


def _no(key: str, prop: Mapping[str, Any], name: str, yes: Any) -> Any | None:
    """The same field saying no, or None when this field cannot say no."""
    kind = prop.get("type")
    options = _options(prop)
    if options:
        negative = next((o for o in options if _NO.search(o) and o != yes), None)
        if negative is None:
            return None
        return [negative] if kind == "array" else negative
    if kind == "boolean":
        return False
    if kind == "string" and yes == name:
        # The form asks the user to type the name: a different name is a no.
        return f"not-{name}"
    return None


def _fields(schema: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    props = properties(schema)
    required = [k for k in (schema or {}).get("required") or [] if k in props]
    if not required:
        return props
    # Required fields, plus optional yes/no fields a careful server may read.
    return {k: v for k, v in props.items() if k in required or v.get("type") == "boolean" or _options(v)}


def affirmative(
    schema: Mapping[str, Any] | None, name: str, path: str, template: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    if template is not None:
        return fill_template(template, name, path)
    return {key: _yes(key, prop, name, path) for key, prop in _fields(schema).items()}


def negative(
    schema: Mapping[str, Any] | None, name: str, path: str, template: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """An accepted form that nonetheless says no; None when the form has no way to say it."""
    if template is not None:
        return fill_template(template, name, path)
    answer = affirmative(schema, name, path)
    fields = _fields(schema)
    said_no = False
    for key, prop in fields.items():
        no = _no(key, prop, name, answer[key])
        if no is not None:
            answer[key] = no
            said_no = True
    return answer if said_no else None


def yes_no_field(schema: Mapping[str, Any] | None, name: str, path: str) -> tuple[str, str] | None:
    """The field that carries the decision and its type ("boolean", "enum", "name")."""
    for key, prop in _fields(schema).items():
        if _options(prop):
            return key, "enum"
        if prop.get("type") == "boolean":
            return key, "boolean"
    for key, prop in _fields(schema).items():
        if _yes(key, prop, name, path) == name:
            return key, "name"
    return None


def fill_template(template: Mapping[str, Any], name: str, path: str) -> dict[str, Any]:
    return {
        key: value.replace("{name}", name).replace("{path}", path) if isinstance(value, str) else value
        for key, value in template.items()
    }
