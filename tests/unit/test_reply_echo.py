"""A value the harness sent, echoed in a reply, is taken out before the reply's concern is read.

`who_refused` used to compile a regular expression for every value sent; each hostile name is
new, so none was ever cached. The scan that replaced it must take out exactly what that
expression did: whole occurrences only, never one inside a longer word.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from mcp_confirm_audit.confirmations.replies import _without_echo


def _by_pattern(read: str, value: str) -> str:
    return re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", " ", read)


def test_whole_values_only() -> None:
    assert _without_echo("status: cancelled (cancel)", "cancel") == "status: cancelled ( )"
    assert _without_echo("Is a directory: '020-mca-root-006'", "020-mca-root-006") == "Is a directory: ' '"
    assert _without_echo("root-006 and root", "root") == "root-006 and  "


# Few letters, so values recur in the text, inside words and beside them.
_TEXT = st.text(alphabet="ab-_ .é1\u00a0'", max_size=40)


@given(read=_TEXT, value=st.text(alphabet="ab-_ .é1'", min_size=1, max_size=4))
def test_the_same_as_the_pattern(read: str, value: str) -> None:
    assert _without_echo(read, value) == _by_pattern(read, value)
