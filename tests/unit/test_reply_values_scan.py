"""`name: value` pairs read from a reply's text: the same pairs as before, in linear time on a long word.

The look-behind added to `values._IN_TEXT` skips key starts inside a word after a letter; the pairs
found must be exactly those the pattern without it found.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from mcp_confirm_audit.confirmations import values

_BEFORE = re.compile(r"""["']?(?P<key>[A-Za-z_][\w-]*)["']?\s*[:=]\s*["']?(?P<value>[\w\-.~+/=]{4,})""")


def _pairs(pattern: re.Pattern[str], text: str) -> list[tuple[str, str]]:
    return [(m.group("key"), m.group("value")) for m in pattern.finditer(text)]


@given(st.text(alphabet="aZ_9-é'\": =.x", max_size=60))
def test_the_same_pairs_as_without_the_look_behind(text: str) -> None:
    assert _pairs(values._IN_TEXT, text) == _pairs(_BEFORE, text)


def test_a_key_after_digits_is_still_found() -> None:
    assert _pairs(values._IN_TEXT, "9token: abcd1234") == [("token", "abcd1234")]
    assert _pairs(values._IN_TEXT, "x" * 3000 + " token= abcd1234") == [("token", "abcd1234")]
