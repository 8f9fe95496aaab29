"""Which tier runs a test (tests/README.md): read by tests/conftest.py and tests/unit/test_tiers.py."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
# Folders whose every test starts real target processes, runs whole matrices or runs pytest inside
# pytest: the full tier.
SLOW_FOLDERS = frozenset({"matrix", "hostile", "plugin", "cli", "action", "container", "docs"})
# Folders of the fast tier: a test in one that starts a process is marked `slow` in its file.
FAST_FOLDERS = frozenset({"unit", "report", "reference"})
# Fixtures that start a process (a pytest of its own, a redis-server): a test using one is slow anywhere.
SLOW_FIXTURES = frozenset({"pytester", "redis_url"})
