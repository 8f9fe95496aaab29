"""Security tests that must run on Linux: a skip of one there fails the run (read by tests/conftest.py).

A symlink, race, redis or hostile-target test that skips hides the regression it exists to catch, and a
green run that skipped it says nothing. CI is Linux, where every one of them can run (namespaces,
inotify, the redis-server the dev extra brings): there, a skip of any of them turns the run red and
names it. Elsewhere (a developer's Mac) they may skip, as their own `skipif`s say.
"""

from __future__ import annotations

import re
import sys

import pytest

# A test is one of these when a word of its node id (its folder, file, name or parameters) is one.
MUST_RUN_WORDS = frozenset(
    {"symlink", "symlinks", "race", "races", "racy", "redis", "hostile", "confinement", "confined"}
)


# Files whose every test must run whatever its words: this guard's own tests (skipped off Linux by their
# `skipif`, as the rule is Linux's), so a skip that hid the guard breaking would itself fail the run.
MUST_RUN_FILES = ("tests/unit/test_must_run.py::",)


def must_run(nodeid: str) -> bool:
    """Whether a skip of the test `nodeid` hides a security regression (its words, not substrings)."""
    if nodeid.startswith(MUST_RUN_FILES):
        return True
    return not MUST_RUN_WORDS.isdisjoint(re.split(r"[^a-z0-9]+", nodeid.lower()))


def pytest_configure(config: pytest.Config) -> None:
    # One guard per run: an inner run (pytester, in this process) keeps its own list.
    config.pluginmanager.register(_Guard(config), "mcp-audit-must-run")


class _Guard:
    def __init__(self, config: pytest.Config) -> None:
        # On the xdist controller, which sees every worker's reports; a worker's own status is not the run's.
        self._judges = sys.platform.startswith("linux") and not hasattr(config, "workerinput")
        self.skipped: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self._judges or not report.skipped or hasattr(report, "wasxfail"):
            return
        if must_run(report.nodeid) and report.nodeid not in self.skipped:
            self.skipped.append(report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.skipped and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.skipped:
            terminalreporter.section("security tests skipped on Linux (the run fails)", red=True)
            for nodeid in self.skipped:
                terminalreporter.line(f"{nodeid}: must run on Linux; fix what made it skip")
