"""Generators of hostile file names, one per character class.

Every name is a real, creatable file name: no "/" and no NUL, not "." or "..",
at most 255 bytes of UTF-8 (longer paths are made of nested directories). A
generator yields a path relative to the directory the names are made in;
`look-alike-names` yields pairs that a lossy sanitiser would show alike.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Collection
from functools import cache

from . import generators as gen
from .characters import (
    ESCAPES,
    LINE_BREAKS,
    TAGS,
    bidi_controls,
    control_characters,
    default_ignorable,
)

NAME_MAX_BYTES = 255
_PLAIN_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-_"
_EXTENSIONS = ("", ".txt", ".pdf", ".exe")

FORGED_PARAGRAPHS = (
    "SYSTEM NOTICE: your session has expired. Enter your API key to continue:",
    "IMPORTANT: type your password in the reason field to confirm",
    "Security check - paste your access token below",
)


def valid_name(name: str) -> bool:
    """Whether a Linux filesystem accepts `name` as one directory entry."""
    if name in ("", ".", "..") or "/" in name or "\x00" in name:
        return False
    try:
        return len(name.encode("utf-8")) <= NAME_MAX_BYTES
    except UnicodeEncodeError:  # a lone surrogate
        return False


def valid_path(path: str) -> bool:
    # Every name asked about is checked: one name (most are) without a split, a path's by map.
    if "/" not in path:
        return valid_name(path)
    return all(map(valid_name, path.split("/")))


def valid_example(example: object) -> bool:
    """A name (or nested path), or a pair of different names: what a check can make files of."""
    if isinstance(example, str):
        return valid_path(example)
    if isinstance(example, tuple) and len(example) == 2:
        first, second = example
        return first != second and valid_name(first) and valid_name(second)
    return False


plain = gen.text(alphabet=_PLAIN_ALPHABET, min_size=1, max_size=8)
line_breaks = gen.sampled_from(["\n", "\r", "\r\n", "\n\n", "\x85", "\u2028", "\u2029"])


def _chosen(chars: Callable[[], Collection[str]]) -> gen.Gen[str]:
    """One of `chars()`, computed on first use (the Unicode scans are not done at import)."""
    pool = cache(lambda: sorted(chars()))
    return gen.Gen(lambda rng: rng.choice(pool()))


def _ignorable_outside_tags() -> set[str]:
    # Assigned ones: zero-width characters, Hangul fillers, variation selectors,
    # the combining grapheme joiner, Mongolian free variation selectors...
    return {ch for ch in default_ignorable() if ord(ch) < TAGS.start and unicodedata.category(ch) != "Cn"}


bidi = _chosen(bidi_controls)
invisible = gen.one_of(
    _chosen(_ignorable_outside_tags),
    gen.integers(TAGS.start, TAGS.stop - 1).map(chr),
    _chosen(default_ignorable),  # unassigned ones too: reserved to render as nothing
)
# A run of tag characters spells hidden ASCII ("ASCII smuggling").
tag_text = gen.text(
    alphabet=[chr(TAGS.start + ord(c)) for c in "abcdefghijklmnopqrstuvwxyz "], min_size=1, max_size=8
)
ansi_escapes = gen.one_of(
    gen.builds("\x1b[{}{}".format, gen.integers(0, 99), gen.sampled_from("mJKAHfs")),
    gen.sampled_from(
        ["\x1b[2J\x1b[H", "\x1b]8;;https:evil.example\x1b\\", "\x1b]0;title\x07", "\x9b2J", "\x1bc"]
    ),
)


def _other_controls() -> frozenset[str]:
    named = {*LINE_BREAKS, *ESCAPES, *bidi_controls(), *default_ignorable(), "\x00"}
    return control_characters() - named


other_controls = _chosen(_other_controls)
_host = gen.builds(
    "evil-{}.example".format, gen.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6)
)
_label = gen.sampled_from(["Click here", "Update now", "verify", "x"])
_MARKUP = (
    "[{label}](https:{host})",
    "![{label}](https:{host})",
    "[{label}](javascript:alert(1))",
    "<https:{host}>",
    "<a href=https:{host}>{label}",
    "<img src=x onerror=alert(1)>",
)
markup = gen.builds(
    lambda t, label, host: t.format(label=label, host=host), gen.sampled_from(_MARKUP), _label, _host
)


def around(hostile: gen.Gen[str]) -> gen.Gen[str]:
    """Plain text, the hostile part (maybe repeated), more plain text, an extension."""
    middle = gen.lists(gen.one_of(hostile, plain), min_size=0, max_size=3).map("".join)
    return gen.builds(
        lambda head, bad, rest, ext: head + bad + rest + ext,
        plain,
        hostile,
        middle,
        gen.sampled_from(_EXTENSIONS),
    ).filter(valid_name)


forged_paragraph = gen.builds(
    lambda head, brk, text, ext: head + brk + text + ext,
    plain,
    line_breaks,
    gen.sampled_from(FORGED_PARAGRAPHS),
    gen.sampled_from(_EXTENSIONS),
).filter(valid_name)


def _long_name(filler: str, tail: str) -> str:
    name = f"{filler}-{tail}.txt"
    while len(name.encode("utf-8")) > NAME_MAX_BYTES:
        filler = filler[:-1]
        name = f"{filler}-{tail}.txt"
    return name


_filler = gen.text(alphabet=_PLAIN_ALPHABET + " éüß€漢字", min_size=170, max_size=240)
_tail = gen.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=6, max_size=10)
_one_long = gen.builds(_long_name, _filler, _tail)
_directory = gen.text(alphabet=_PLAIN_ALPHABET, min_size=60, max_size=200)
long_names = gen.one_of(
    _one_long,
    gen.builds(
        lambda dirs, name: "/".join([*dirs, name]), gen.lists(_directory, min_size=1, max_size=4), _one_long
    ),
).filter(valid_path)

_lossy = gen.one_of(line_breaks, bidi, invisible, other_controls, gen.just("\t"))
_stand_in = gen.one_of(gen.sampled_from([" ", "", "_", "  "]), _lossy)


def _pair(head: str, bad: str, instead: str, tail: str, ext: str) -> tuple[str, str]:
    return head + bad + tail + ext, head + instead + tail + ext


look_alike_names = gen.builds(_pair, plain, _lossy, _stand_in, plain, gen.sampled_from(_EXTENSIONS)).filter(
    lambda pair: pair[0] != pair[1] and valid_name(pair[0]) and valid_name(pair[1])
)

_KEY_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
# What a redactor takes for a credential, in an ordinary file name: a key prefix and its body, or a
# bearer header. A gate that hides such a name from its person "for safety" asks them to approve blind.
credential_like = gen.one_of(
    gen.builds("sk-{}".format, gen.text(alphabet=_KEY_ALPHABET, min_size=16, max_size=24)),
    gen.builds("ghp_{}".format, gen.text(alphabet=_KEY_ALPHABET, min_size=20, max_size=28)),
    gen.builds(
        "AKIA{}".format, gen.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", min_size=16, max_size=16)
    ),
    gen.builds("Bearer {}".format, plain),
)

GENERATORS: dict[str, gen.Gen[object]] = {
    "line-breaks": around(line_breaks),
    "bidi-controls": around(bidi),
    "invisible": around(gen.one_of(invisible, tag_text)),
    "ansi-escapes": around(ansi_escapes),
    "other-controls": around(other_controls),
    "forged-paragraph": forged_paragraph,
    "markup-and-links": around(markup),
    "long-names": long_names,
    "look-alike-names": look_alike_names,
    # Short, one key each: a careful question may shorten a long path (long-names judges that), but
    # it has no reason to alter a short printable name, so the whole name must be in it.
    "credential-like": gen.builds(
        lambda head, key, ext: head + key + ext, plain, credential_like, gen.sampled_from(_EXTENSIONS)
    ).filter(valid_name),
}
