"""`json.dumps(document, indent=2, ensure_ascii=False)`, byte for byte, without its generators.

The standard library indents only in its pure-Python encoder, one generator per
nesting level for every value; a report holds every exchange of every attack, and
writing it was a visible part of an audit's time. Here each value is written by
one recursive function into one list, and every string through the standard
library's own C escaper, so the text is exactly what `json.dumps` writes.

Why not the C encoder (`c_make_encoder`, which writes no line break) one level at a
time, with the level's indentation as its item separator and each nested container
put in where a placeholder was: tried, it makes a fifth (audit.json) to a half
(audit.sarif) of the Python calls, but takes 1.4 and 2 times as long on Python 3.11:
each of its calls costs about a microsecond before it writes anything, more than
this function takes for the small containers a report is mostly made of.
"""

from __future__ import annotations

import json
from typing import Any

_escape = json.encoder.encode_basestring  # ensure_ascii=False: the C escaper where there is one
_INDENT = "  "
_INFINITY = float("inf")
_STRINGS = frozenset({str})
_EMPTY = {dict: "{}", list: "[]"}


class _Keys(dict[str, str]):
    """Each string key escaped once: a report repeats the same few dozen keys in every result.

    Only `str` keys are kept (`True`, `1` and `1.0` are one dict key but three JSON keys), and
    at most a few thousand, as a key can be a target's string.
    """

    def __missing__(self, key: object) -> str:
        if type(key) is not str:
            return _key(key)
        text: str = _escape(key)
        if len(self) < 4096:
            self[key] = text
        return text


_KEYS = _Keys()


def dumps(document: Any) -> str:
    """The same text as `json.dumps(document, indent=2, ensure_ascii=False)`."""
    out: list[str] = []
    _write(document, out, "\n")
    return "".join(out)


def _scalar(value: Any) -> str | None:
    """A value that is no container, written as `json.dumps` writes it; None for a container."""
    if isinstance(value, str):
        return _escape(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, list | tuple | dict):
        return None
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (_INFINITY, -_INFINITY):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return _escape(key)
    if isinstance(key, float):
        return _escape(_float(key))
    if key is True or key is False or key is None:
        return _escape(_scalar(key) or "")
    if isinstance(key, int):
        return _escape(int.__repr__(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _write(value: Any, out: list[str], newline: str) -> None:
    # `newline` is the line break and indentation of the level `value` sits at.
    kind = type(value)
    if kind is not dict and kind is not list:
        text = _scalar(value)
        if text is not None:
            out.append(text)
            return
    inner = newline + _INDENT
    if kind is dict or (kind is not list and isinstance(value, dict)):
        if not value:
            out.append("{}")
            return
        # One piece for each item: its separator, key and (a string or other scalar) value together.
        separator, after = "{" + inner, "," + inner
        # Every value of every report passes here: no call for a key seen before, nor for null,
        # true, false or an empty list.
        for key, item in value.items():
            kind = type(item)
            if kind is str:  # most values
                out.append(f"{separator}{_KEYS[key]}: {_escape(item)}")
            elif item is None:
                out.append(f"{separator}{_KEYS[key]}: null")
            elif item is True:
                out.append(f"{separator}{_KEYS[key]}: true")
            elif item is False:
                out.append(f"{separator}{_KEYS[key]}: false")
            elif kind is dict or kind is list:
                if item:
                    out.append(f"{separator}{_KEYS[key]}: ")
                    _write(item, out, inner)
                else:  # as often as not: no evidence, nothing removed
                    out.append(f"{separator}{_KEYS[key]}: {_EMPTY[kind]}")
            elif (text := _scalar(item)) is not None:
                out.append(f"{separator}{_KEYS[key]}: {text}")
            else:  # a tuple, or a container of another class
                out.append(f"{separator}{_KEYS[key]}: ")
                _write(item, out, inner)
            separator = after
        out.append(newline + "}")
        return
    if not value:
        out.append("[]")
        return
    if _STRINGS.issuperset(map(type, value)):
        # Evidence, most of a report: lines of text, escaped and joined in one go.
        out.append(f"[{inner}{(',' + inner).join(map(_escape, value))}{newline}]")
        return
    separator, after = "[" + inner, "," + inner
    for item in value:
        out.append(separator)
        _write(item, out, inner)
        separator = after
    out.append(newline + "]")
