"""The generated names are real, creatable file names, each carrying its class."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_confirm_audit.catalogue.characters import char_class
from mcp_confirm_audit.catalogue.hostile_names import FORGED_PARAGRAPHS, GENERATORS, valid_name, valid_path

# Seeds x names per seed: more than a run draws for one attack.
SEEDS = range(8)
PER_SEED = 25

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
    for seed in SEEDS:
        for name in GENERATORS[kind].examples(PER_SEED, seed):
            assert isinstance(name, str)
            assert valid_path(name)
            assert CARRIES[kind](name), ascii(name)
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")  # the filesystem agrees
            assert path.is_file()


def test_look_alike_pairs_are_two_different_valid_names() -> None:
    for seed in SEEDS:
        for pair in GENERATORS["look-alike-names"].examples(PER_SEED, seed):
            assert isinstance(pair, tuple)
            first, second = pair
            assert first != second
            assert valid_name(first)
            assert valid_name(second)


def test_other_controls_draw_from_every_plane_that_has_them() -> None:
    drawn = {
        ch
        for seed in range(40)
        for name in GENERATORS["other-controls"].examples(PER_SEED, seed)
        for ch in name
        if char_class(ch) == "control character"
    }
    assert any(ord(ch) < 0x100 for ch in drawn)
    assert any(0x100 <= ord(ch) < 0x10000 for ch in drawn)
    assert any(ord(ch) >= 0x10000 for ch in drawn)


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


def test_invisible_names_carry_letters_and_marks_that_render_as_nothing() -> None:
    # Not only zero-width and tag characters: what a category-based sanitiser lets through.
    drawn = {
        ch
        for seed in range(40)
        for name in GENERATORS["invisible"].examples(PER_SEED, seed)
        for ch in name
        if char_class(ch) == "invisible character"
    }
    assert drawn & {"\u115f", "\u1160", "\u3164", "\uffa0"}, "no Hangul filler"
    assert any(0xFE00 <= ord(ch) <= 0xFE0F or 0xE0100 <= ord(ch) <= 0xE01EF for ch in drawn), "no selector"
    assert {unicodedata.category(ch) for ch in drawn} >= {"Cf", "Mn", "Lo", "Cn"}
