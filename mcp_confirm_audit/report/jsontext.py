"""The reports' indented JSON as `json.dumps(indent=2, ensure_ascii=False)` writes it, by pydantic-core.

A report holds every exchange of every attack, and the standard library indents only in its
pure-Python encoder (one generator per nesting level for every value): 7.6 ms for an in-process
audit's audit.json and audit.sarif, where the whole audit takes 0.4 s. pydantic-core, which the
harness depends on already, writes them from Rust in 0.9 ms (the hand-written writer it replaces
took 2.7 ms).

What the two write alike, and `tests/report/test_json_text.py` proves: the same separators and
indentation, non-ASCII as it is, the same escapes (`"`, `\\`, the C0 controls, `\\u00XX` in lower
case), integers of any size, `NaN` and `Infinity`, and `true`, `1` and `1.0` as keys. Where they
differ, nothing in a report is: the writers give it JSON's own types and string keys, and its only
floats are a profile's seconds (a call timeout). A float under 1e-4 is written positionally
(`0.00001`, the same number to any reader); a None or tuple key as Python spells it; a date, an
enum or a dataclass as pydantic writes one (`json.dumps` raises `TypeError`). What pydantic-core
will not write (a lone surrogate, an object of no type it knows) goes to `json.dumps`, which
writes it or raises as before.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError, to_json


def dumps(document: Any) -> str:
    """The text `json.dumps(document, indent=2, ensure_ascii=False)` writes (see the module's note)."""
    try:
        return to_json(document, indent=2).decode()
    except PydanticSerializationError:
        return json.dumps(document, indent=2, ensure_ascii=False)
