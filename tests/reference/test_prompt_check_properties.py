"""The prompt checks, as properties over any name and every style of careful server.

For any name, the question a careful server in any style writes (an injective
sanitiser that shows every hidden character as a visible escape, see
targets/reference/styles/) gets no finding, and no two names read alike. The
same sanitiser made to drop, fold or pass through what hides gets one, for any
name that carries a dangerous character.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_confirm_audit.catalogue.characters import CONTROL_PLANES, char_class
from mcp_confirm_audit.catalogue.hostile_names import valid_name
from mcp_confirm_audit.catalogue.prompt_checks import collisions, message_problems

STYLES = ("quoted", "markdown-escaped", "code-span", "own-ledger")
PLAIN = "plain-name.txt"

_DANGEROUS = sorted(ch for plane in CONTROL_PLANES for ch in map(chr, plane) if char_class(ch) is not None)
dangerous = st.sampled_from(_DANGEROUS)
# What a name is made of: plain text, the syntax the styles quote with, text that
# looks like their escapes, anything at all, and what the checks look for.
pieces = st.one_of(
    st.text("abcxyz0189._- ", min_size=1, max_size=6),
    st.sampled_from(["\\", "`", "``", "*", "_", "[", "](", ")", "<", ">", '"', "!", "#", "|", "~", "…"]),
    st.sampled_from(["\\u200b", "\\u{200B}", "<U+200B>", "\\x1b", "\\\\", "https:evil.example", "<a href="]),
    st.characters(exclude_categories=["Cs"], exclude_characters="/\x00"),
    # A line of its own that a template's line also starts with.
    st.sampled_from(
        ["\nThe file", "\nPermanently delete", "\n**Delete**", "\nApprove", "\nThere is no undo."]
    ),
    dangerous,
)


def _at_most_255_bytes(name: str) -> str:
    return name.encode()[:255].decode("utf-8", "ignore")


names = st.lists(pieces, min_size=1, max_size=12).map("".join).map(_at_most_255_bytes).filter(valid_name)
# Long enough to be shortened: the end must survive whatever it is made of.
long_names = st.tuples(st.text("ab\u3164\u202e-", min_size=150, max_size=200), names).map("".join)
any_names = st.one_of(names, long_names.map(_at_most_255_bytes).filter(valid_name))
with_danger = st.tuples(names, dangerous, names).map("".join).map(_at_most_255_bytes).filter(valid_name)

Question = Callable[[str], str]


@pytest.fixture(scope="module")
def written(reference: ModuleType) -> Callable[..., Question]:
    """The question a style writes about a name, with its own escaping or another one."""
    assert reference.__name__ in sys.modules  # the server's directory is on sys.path now
    import prompt  # type: ignore[import-not-found]
    import styles  # type: ignore[import-not-found]

    def question(style: str, visible: Callable[[str, Callable[[str], str]], str] | None = None) -> Question:
        """`visible(ch, careful)` replaces the style's stand-in for a hidden character."""
        chosen = styles.STYLES[style]
        escaping = chosen.escaping
        if visible is not None:
            careful = escaping.visible
            escaping = prompt.Escaping(quote=escaping.quote, visible=lambda ch: visible(ch, careful))
        return lambda name: chosen.question(
            prompt.shown_name(name, escaping=escaping), "boolean", "delete", True
        )

    return question


def _problems(question: Question, name: str) -> list[Any]:
    return message_problems(question(name), question(PLAIN), name)


@pytest.mark.parametrize("style", STYLES)
@settings(max_examples=60, deadline=None)
@given(name=any_names, other=any_names)
def test_a_careful_style_gets_no_finding_for_any_name(
    written: Callable[..., Question], style: str, name: str, other: str
) -> None:
    question = written(style)
    assert _problems(question, name) == []
    if name != other:
        assert collisions([(name, question(name)), (other, question(other))]) == []


@pytest.mark.parametrize("style", STYLES)
@settings(max_examples=30, deadline=None)
@given(name=with_danger)
def test_a_sanitiser_that_passes_a_dangerous_character_through_is_caught(
    written: Callable[..., Question], style: str, name: str
) -> None:
    passes = written(style, visible=lambda ch, careful: ch if char_class(ch) else careful(ch))
    assert _problems(passes, name) != []


def _lossy(stand_in: str) -> Callable[[str, Callable[[str], str]], str]:
    """Every dangerous character shown as `stand_in`; every other hidden one escaped with care."""
    return lambda ch, careful: stand_in if char_class(ch) else careful(ch)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("stand_in", ["", " ", "?"], ids=["drops", "folds-to-space", "folds-to-mark"])
@settings(max_examples=15, deadline=None)
@given(name=with_danger)
def test_a_sanitiser_that_drops_or_folds_a_dangerous_character_is_caught(
    written: Callable[..., Question], style: str, stand_in: str, name: str
) -> None:
    lossy = written(style, visible=_lossy(stand_in))
    # Another name, with another dangerous character wherever this one has one: they read alike.
    look_alike = "".join(("\u200c" if ch == "\u200b" else "\u200b") if char_class(ch) else ch for ch in name)
    assert collisions([(name, lossy(name)), (look_alike, lossy(look_alike))]) != []
