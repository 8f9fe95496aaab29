"""The reports' JSON is written as `json.dumps(document, indent=2, ensure_ascii=False)` writes it."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_confirm_audit.report import jsontext


def _report_float(value: float) -> bool:
    # A report's only floats are a profile's seconds (a call timeout): none is under 1e-4 but zero.
    return not (0 < abs(value) < 1e-4)


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True).filter(_report_float)
    | st.text(st.characters(codec="utf-8", categories=None), max_size=12)
)
# Keys as a report has them (its own names, a target's JSON object keys), and the numbers and
# bools `json.dumps` turns into keys.
_KEYS = st.text(st.characters(codec="utf-8"), max_size=6) | st.integers() | st.booleans()
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(st.text(max_size=8), max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(_KEYS, inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_DOCUMENTS)
def test_any_report_document_is_written_as_the_standard_library_writes_it(document: Any) -> None:
    assert jsontext.dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-1e-4, max_value=1e-4, allow_nan=False))
def test_a_tiny_float_is_the_same_number_to_any_reader(value: float) -> None:
    read = json.loads(jsontext.dumps([value]))[0]
    assert read == value
    assert math.copysign(1, read) == math.copysign(1, value)


@pytest.mark.parametrize("document", [{"x": object()}, [{"x": {object()}}]])
def test_what_neither_can_write_fails_as_json_fails(document: Any) -> None:
    with pytest.raises(TypeError):
        json.dumps(document, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError):
        jsontext.dumps(document)


def test_a_lone_surrogate_is_written_as_the_standard_library_writes_it() -> None:
    # pydantic-core refuses it (not UTF-8); the standard library writes it, as the writers always did.
    document = {"tool": "\ud800", "\udfff": ["\ud800x"]}
    assert jsontext.dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)


def test_a_tricky_document_is_written_as_the_standard_library_writes_it() -> None:
    # Keys needing escapes, keys that are one dict key but not one JSON key (True, 1) in
    # neighbouring dicts, control and format characters, empty containers at every depth,
    # floats, big ints, and a string that looks like JSON.
    document = {
        'k"\\\n\x00\u2028é𝔸': ["\x00\x1f\x7f\u202e", "", 'x": "\\u0000"'],
        "nested": {"empty": {}, "list": [], "deeper": [[{}], [[]], {"a": [{}]}], "tuple": (1, "2", None)},
        "numbers": [0, -1, 2**70, 1e16, -0.0, 1.5, 0.1, 12.3, float("nan"), float("inf"), -float("inf")],
        "flags": [True, False, None],
        "mixed keys": [{True: 1}, {1: 2}, {1.0: 3}, {"true": 5}, {"1": 6}],
        "\x00": "\x00",
    }
    assert jsontext.dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)
