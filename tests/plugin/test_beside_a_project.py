"""`pytest --mcp-target CMD` in a server's own repository: the project's tests are pytest's, untouched.

pytest collects the project's tests beside the audit's items. A test module
that fails to import is a collection error; the plugin must leave it (and the
project's passing and failing tests) exactly as pytest reports them without
the plugin, and still judge and report the audit.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

# Each Python stdio target of the in-process runs forked from the SDK's zygote (tests/forking.py).
pytestmark = pytest.mark.usefixtures("forked_targets")

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
TARGET = shlex.join([sys.executable, str(SERVER), "--root", "{root}"])
# Only the project's tests and one attack: the audit's other items are not the point here.
SELECTED = ("-k", "test_ or MCA-REPLAY-001", "-rA", "-p", "no:randomly")


def _project(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_broken="import a_module_the_project_forgot_to_install\n",
        test_plain="def test_passes():\n    pass\n\ndef test_fails():\n    assert 1 == 2\n",
    )


def _project_lines(result: pytest.RunResult) -> list[str]:
    """What pytest said about the project's own items: the summary lines and the collection error."""
    said = [
        line.split(" - ")[0]
        for line in result.outlines
        if line.startswith(("PASSED ", "FAILED ", "ERROR ")) and "test_" in line.split(" ")[1]
    ]
    return sorted(said) + [line for line in result.outlines if "ERROR collecting" in line]


@pytest.mark.parametrize("continue_on_errors", [False, True], ids=["interrupted", "continued"])
def test_a_broken_test_module_beside_the_audit_is_reported_as_without_the_plugin(
    pytester: pytest.Pytester, continue_on_errors: bool
) -> None:
    _project(pytester)
    options = ["--continue-on-collection-errors"] if continue_on_errors else []
    without = pytester.runpytest(*SELECTED, *options, "-p", "no:mcp_confirm_audit")
    audited = pytester.runpytest(*SELECTED, *options, "--mcp-target", TARGET, "--mcp-report-dir", "out")

    assert "AttributeError" not in audited.stdout.str() + audited.stderr.str()
    assert _project_lines(audited) == _project_lines(without)
    assert "ERROR collecting test_broken.py" in "\n".join(_project_lines(audited))
    if not continue_on_errors:
        # pytest stops before any test runs, with its own summary; so does the audit.
        assert audited.ret == without.ret == pytest.ExitCode.INTERRUPTED
        audited.stdout.fnmatch_lines(["*Interrupted: 1 error during collection*"])
        return
    assert audited.ret == without.ret == pytest.ExitCode.TESTS_FAILED
    without.assert_outcomes(passed=1, failed=1, errors=1)
    # The one attack selected is judged beside them, and reported.
    audited.assert_outcomes(passed=2, failed=1, errors=1)
    audited.stdout.fnmatch_lines(["MCA-REPLAY-001 after-success*delete_file*refused*tool*"])
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert [(r["id"], r["verdict"]) for r in report["results"]] == [("MCA-REPLAY-001", "refused")]
