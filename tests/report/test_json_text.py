"""The reports' JSON is written exactly as `json.dumps(document, indent=2, ensure_ascii=False)` writes it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_confirm_audit.report import jsontext

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(codec=None, categories=None), max_size=12)
)
_KEYS = st.text(max_size=6) | st.integers() | st.floats(allow_nan=True) | st.booleans() | st.none()
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
def test_any_document_is_written_as_the_standard_library_writes_it(document: Any) -> None:
    assert jsontext.dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("document", [{"x": object()}, [{(1, 2): "a tuple is no key"}]])
def test_what_json_cannot_write_fails_as_it_does(document: Any) -> None:
    with pytest.raises(TypeError):
        json.dumps(document, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError):
        jsontext.dumps(document)


def test_a_tricky_document_is_written_as_the_standard_library_writes_it() -> None:
    # Keys needing escapes, keys that are one dict key but not one JSON key (True, 1) in
    # neighbouring dicts, control and format characters, a lone surrogate, empty containers
    # at every depth, floats, big ints, and a string that looks like JSON.
    document = {
        'k"\\\n\x00\u2028é𝔸': ["\x00\x1f\x7f\u202e\ud800", "", 'x": "\\u0000"'],
        "nested": {"empty": {}, "list": [], "deeper": [[{}], [[]], {"a": [{}]}], "tuple": (1, "2", None)},
        "numbers": [0, -1, 2**70, 1e16, -0.0, 1.5, float("nan"), float("inf"), -float("inf")],
        "flags": [True, False, None],
        "mixed keys": [{True: 1}, {1: 2}, {1.0: 3}, {None: 4}, {"true": 5}, {"1": 6}],
        "\x00": "\x00",
    }
    for _ in range(2):  # the second time, every string key is one written before
        assert jsontext.dumps(document) == json.dumps(document, indent=2, ensure_ascii=False)
