"""docs/how-to/channel-profiles.md shows each channel's profile as the file under targets/ says it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from mcp_confirm_audit.profile.loader import load_profile

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "how-to" / "channel-profiles.md"
# A section's profile: the first `targets/NAME.yaml` the section names, and its yaml block.
SECTION = re.compile(r"^## (?P<title>.+?)$(?P<body>.*?)(?=^## |\Z)", re.M | re.S)
FILE = re.compile(r"`(targets/[\w.-]+\.yaml)`")
BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)


def _shown() -> dict[str, tuple[str, str]]:
    found = {}
    for section in SECTION.finditer(PAGE.read_text(encoding="utf-8")):
        named, block = FILE.search(section["body"]), BLOCK.search(section["body"])
        if named and block:
            found[section["title"]] = (named.group(1), block.group(1))
    return found


def test_every_channel_has_a_complete_profile_that_is_its_file_and_loads() -> None:
    shown = _shown()
    titles = " ".join(shown)
    for channel in (
        "webhook",
        "MRTR",
        "terminal",
        "paired device",
        "devices",
        "signed",
        "servers",
        "placeholder",
    ):
        assert channel in titles, (channel, list(shown))
    for title, (named, block) in shown.items():
        on_disk = yaml.safe_load((ROOT / named).read_text(encoding="utf-8"))
        in_page = yaml.safe_load(block)
        # The page may leave out the name; every key it shows is the file's, word for word.
        assert {k: v for k, v in on_disk.items() if k in in_page} == in_page, title
        assert set(on_disk) - set(in_page) <= {"name"}, (title, set(on_disk) - set(in_page))
        load_profile(ROOT / named)
