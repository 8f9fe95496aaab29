"""What a profile may spell with the harness's names: `{root}` in args:, `${NAME}` in env:.

A server that takes absolute paths, or its own directory as an argument, is
given `{root}` in the argument template; a server that reads a key from its
environment is given it with `${NAME}`, read from the harness's environment
as `headers:` are. Both are proven on the reference server both ways.
"""

from __future__ import annotations

import json
import secrets
import shlex
import sys
from pathlib import Path

import pytest

# Each Python stdio target of the in-process runs forked from the SDK's zygote (tests/forking.py).
pytestmark = pytest.mark.usefixtures("forked_targets")

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"


def _profile(pytester: pytest.Pytester, *options: str, extra: str = "") -> Path:
    command = shlex.join([sys.executable, str(SERVER), "--root", "{root}", "--paths", "absolute", *options])
    profile = pytester.path / "target.yaml"
    # The harness hands over the case file relative to the root; the template makes it absolute.
    profile.write_text(
        f"command: {json.dumps(command)}\ntool: delete_file\npaths: relative\n"
        f'args: {{path: "{{root}}/{{path}}"}}\n{extra}'
    )
    return profile


@pytest.mark.parametrize(
    ("options", "verdict"),
    [((), "refused"), (("--flaw", "no-ledger"), "vulnerable")],
    ids=["careful", "flawed"],
)
def test_root_in_args_makes_the_absolute_path_a_server_wants(
    pytester: pytest.Pytester, options: tuple[str, ...], verdict: str
) -> None:
    profile = _profile(pytester, *options)
    result = pytester.runpytest(
        "--mcp-profile", str(profile), "-k", "control or MCA-REPLAY-001", "--mcp-report-dir", "out"
    )
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    approve = next(c for c in report["controls"] if c["name"] == "approve")
    assert approve["passed"], approve
    assert any('{"path": "{sandbox}/' in line and "victim.txt" in line for line in approve["evidence"])
    assert [(r["id"], r["verdict"]) for r in report["results"]] == [("MCA-REPLAY-001", verdict)]
    assert result.ret == (pytest.ExitCode.OK if verdict == "refused" else pytest.ExitCode.TESTS_FAILED)


def test_a_variable_in_env_is_read_from_the_harnesss_environment(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server refuses to start unless the variable it is told to read holds a 32-byte key:
    # a literal "${AUDIT_TEST_KEY}" would stop the run with exit 2.
    monkeypatch.setenv("AUDIT_TEST_KEY", secrets.token_hex(32))
    profile = _profile(
        pytester, "--shared-key-env", "REFERENCE_KEY", extra='env: {REFERENCE_KEY: "${AUDIT_TEST_KEY}"}\n'
    )
    result = pytester.runpytest("--mcp-profile", str(profile), "-k", "control")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=4, skipped=1)


def test_a_variable_in_env_that_is_not_set_is_a_usage_error_naming_it(pytester: pytest.Pytester) -> None:
    profile = _profile(pytester, extra='env: {REFERENCE_KEY: "${AUDIT_TEST_KEY_NOT_SET}"}\n')
    result = pytester.runpytest("--mcp-profile", str(profile), "-k", "control")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*env REFERENCE_KEY names ${AUDIT_TEST_KEY_NOT_SET}, which is not set*"])
