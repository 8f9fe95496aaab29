"""Reading a named value (a token, a pending id) out of a tool's result.

Results are JSON text (what MCPServer makes of a dict) more often than not;
otherwise a `name: value` or `name=value` in the text is taken. A JSON-RPC
error's `data` is read as a result's fields (an approval proxy's record id).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from ..models import Response


def fields(response: Response) -> dict[str, Any]:
    """Every scalar field of a JSON result, nested objects flattened (inner names win no ties); of a
    JSON-RPC error, its `data` (a proxy's approval_required hands its record id out there)."""
    found: dict[str, Any] = {}
    _walk(_parsed(response.text), found)
    if response.data is not None:
        _walk(response.data, found)
    return found


@functools.lru_cache(maxsize=16)
def _parsed(text: str) -> Any:
    """A result's JSON, parsed once: detection reads the same reply for an id, a challenge and a token.

    Shared between callers, so read only (`fields` copies what it keeps).
    """
    try:
        return json.loads(text)
    except ValueError:
        return None


def _walk(data: Any, found: dict[str, Any], depth: int = 0) -> None:
    """Each scalar field of `data` into `found`, nested objects flattened, the first of a name kept.

    Filled in place, not yielded: detection reads every reply (a generator's steps add up), and a
    parsed JSON object is a dict, told a Mapping without the ABC's own check.
    """
    if depth > 3 or not isinstance(data, dict | Mapping):
        return
    for key, value in data.items():
        if isinstance(value, str | int | float | bool):
            found.setdefault(str(key), value)
        elif isinstance(value, dict | Mapping):
            _walk(value, found, depth + 1)


def find(response: Response, name: str | None, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """(field, value) for the field called `name` (dotted: `challenge.nonce`), or the first one matching `pattern`."""
    if name is not None and "." in name:
        return _dotted(response, name)
    if name is not None and (whole := _object(response, name)) is not None:
        return name, whole
    for key, value in fields(response).items():
        if (key == name if name else pattern.search(key)) and _names_something(value):
            return key, str(value)

    for key, value in _in_text(response.text[:4096]):
        if value.lower() in _NOTHING:
            continue  # `"token": null` names no token: "null" is never sent back as one
        if key == name if name else pattern.search(key):
            return key, value
    return None


@functools.lru_cache(maxsize=16)
def _in_text(head: str) -> tuple[tuple[str, str], ...]:
    """Every `name: value` in a reply's head, found once for the several names detection asks about.

    The head only: a reply that echoes a 64 KiB argument must not cost this pattern quadratic time
    (and `_IN_TEXT` must not be either in a long word, as a hostile name echoed back is).
    """
    return tuple((match.group("key"), match.group("value")) for match in _IN_TEXT.finditer(head))


def _object(response: Response, name: str) -> str | None:
    """A top-level field that is an object (a challenge the person signs), as compact JSON in key order."""
    data = response.structured
    if not isinstance(data, Mapping) or name not in data:
        try:
            data = json.loads(response.text)
        except ValueError:
            return None
    value = data.get(name) if isinstance(data, Mapping) else None
    if not isinstance(value, Mapping | list):
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# A key never starts right after a letter or `_`: from there it would end where the key starting one
# earlier ends, and be followed by the same text, so it matches only if that one did, and finditer
# takes the earlier. Without the look-behind every letter of a long word was tried as a start, each
# running to the word's end: quadratic in a hostile name echoed back.
_IN_TEXT = re.compile(
    r"""["']?(?<![A-Za-z_])(?P<key>[A-Za-z_][\w-]*)["']?\s*[:=]\s*["']?(?P<value>[\w\-.~+/=]{4,})"""
)


_NOTHING = frozenset({"null", "none", "undefined", "nil", "false", "true"})


def field_of(value: Any, dotted: str) -> Any:
    """`transfer.id` of a result; raises KeyError naming what is missing."""
    current = value
    for part in dotted.split("."):
        if isinstance(current, Mapping) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            raise KeyError(part)
    return current


def _dotted(response: Response, name: str) -> tuple[str, str] | None:
    try:
        found = field_of(json.loads(response.text), name)
    except (ValueError, KeyError):
        return None
    return (name, str(found)) if isinstance(found, str | int) and not isinstance(found, bool) else None


def _names_something(value: Any) -> bool:
    """A token, id or handle: never a boolean, and never empty."""
    return isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip() != ""
