"""The generated names are real, creatable file names, each carrying its class."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from mcp_confirm_audit.hostile_names import FORGED_PARAGRAPHS, STRATEGIES, valid_name, valid_path
from mcp_confirm_audit.prompt_checks import char_class

QUICK = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

CARRIES: dict[str, Callable[[str], bool]] = {
    "line-breaks": lambda name: any(char_class(c) == "line break" for c in name),
    "bidi-controls": lambda name: any(char_class(c) == "bidi control" for c in name),
    "invisible": lambda name: any(char_class(c) == "invisible character" for c in name),
    "ansi-escapes": lambda name: any(char_class(c) == "escape character" for c in name),
    "other-controls": lambda name: any(char_class(c) == "control character" for c in name),
    "forged-paragraph": lambda name: any(text in name for text in FORGED_PARAGRAPHS),
    "markup-and-links": lambda name: any(mark in name for mark in ("](", "<")),
    "long-names": lambda name: len(name) > 170,
}


@pytest.mark.parametrize("kind", sorted(CARRIES))
def test_each_class_makes_creatable_names_that_carry_it(kind: str, tmp_path: Path) -> None:
    @QUICK
    @given(STRATEGIES[kind])
    def check(name: object) -> None:
        assert isinstance(name, str)
        assert valid_path(name)
        assert CARRIES[kind](name), ascii(name)
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")  # the filesystem agrees
        assert path.is_file()

    check()


@QUICK
@given(STRATEGIES["look-alike-names"])
def test_look_alike_pairs_are_two_different_valid_names(pair: object) -> None:
    assert isinstance(pair, tuple)
    first, second = pair
    assert first != second
    assert valid_name(first)
    assert valid_name(second)


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("a.txt", True),
        ("a/b", False),
        ("a\x00b", False),
        (".", False),
        ("..", False),
        ("", False),
        ("é" * 127, True),
        ("é" * 128, False),
        ("\ud800", False),
    ],
)
def test_a_valid_name_is_what_a_linux_filesystem_accepts(name: str, valid: bool) -> None:
    assert valid_name(name) is valid
