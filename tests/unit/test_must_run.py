"""A skipped security test fails a Linux run: a green run that skipped it would hide its regression."""

from __future__ import annotations

import sys

import pytest
from must_run import must_run

# The module is already imported by tests/conftest.py: not rewritten again, and that is fine.
_QUIET = ("-W", "ignore::pytest.PytestAssertRewriteWarning")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the rule is Linux's (CI)")


@pytest.mark.parametrize(
    ("nodeid", "security"),
    [
        ("tests/hostile/test_confinement.py::test_a_run_stopped_by_sigterm", True),
        ("tests/matrix/test_elsewhere.py::test_one_approval_redeemed_many_times_at_once[race]", True),
        ("tests/reference/test_race_gate.py::test_a_lone_redemption_never_waits", True),
        ("tests/matrix/test_shared_ledger.py::test_replicas_pay_once[redis]", True),
        ("tests/unit/test_sandbox.py::test_a_symlink_planted_in_the_case_is_removed_not_followed", True),
        # The guard's own tests, whose names carry none of the words.
        ("tests/unit/test_must_run.py::test_which_tests_must_run_on_linux[x-True]", True),
        # Words, not substrings: a traceback or a trace is no race.
        ("tests/unit/test_phases.py::test_a_traceback_is_kept", False),
        ("tests/container/test_image.py::test_the_image_audits_the_reference_server", False),
    ],
)
def test_which_tests_must_run_on_linux(nodeid: str, security: bool) -> None:
    assert must_run(nodeid) is security


def test_a_skipped_race_test_turns_a_green_run_red_and_is_named(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_checks="""
        import pytest

        def test_race_between_question_and_answer():
            pytest.skip("no inotify here")

        def test_the_docs_build():
            pytest.skip("no browser here")

        def test_something_that_runs():
            pass
        """
    )
    result = pytester.runpytest_inprocess("-p", "must_run", *_QUIET)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*test_race_between_question_and_answer: must run on Linux*"])
    assert "test_the_docs_build: must run" not in result.stdout.str()


def test_a_run_that_skips_no_security_test_stays_green(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_checks="""
        import pytest

        def test_the_docs_build():
            pytest.skip("no browser here")
        """
    )
    assert pytester.runpytest_inprocess("-p", "must_run", *_QUIET).ret == pytest.ExitCode.OK
