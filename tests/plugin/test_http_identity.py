"""A server that wants a bearer token: refused plainly without one, audited with one, never leaked.

The reference server over Streamable HTTP with `--auth bearer`: the SDK's own
token verification, tokens handed to it in its environment. The harness's
tokens come from `${NAME}` in `--mcp-header`, its ini twin or a profile's
`headers:`; every output of the run is then searched for them.
"""

from __future__ import annotations

import json
import secrets
import shlex
import sys
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
REFUSED = (
    "mcp-confirm-audit: the target refused the harness's credentials (HTTP 401, WWW-Authenticate: Bearer): "
    "set headers: in the profile or pass --mcp-header"
)


@pytest.fixture
def tokens(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Fresh tokens in the environment: the server's table, and each one for ${NAME} to name."""
    made = {"alice": f"alice-{secrets.token_urlsafe(16)}", "mallory": f"mallory-{secrets.token_urlsafe(16)}"}
    monkeypatch.setenv("REFERENCE_TOKENS", ",".join(f"{name}={token}" for name, token in made.items()))
    monkeypatch.setenv("ALICE_TOKEN", made["alice"])
    monkeypatch.setenv("MALLORY_TOKEN", made["mallory"])
    return made


def bearer_target() -> str:
    options = [
        "--transport",
        "http",
        "--port",
        "{port}",
        "--auth",
        "bearer",
        "--tokens-env",
        "REFERENCE_TOKENS",
    ]
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


def every_output(pytester: pytest.Pytester, result: pytest.RunResult) -> str:
    """The terminal, and every file the run wrote: reports (with the target's stderr in evidence), JUnit XML."""
    written = [p.read_text(errors="replace") for p in sorted(pytester.path.rglob("*")) if p.is_file()]
    return "\n".join([result.stdout.str(), result.stderr.str(), *written])


def test_without_credentials_the_run_stops_with_exit_2_and_one_line_naming_the_401_and_headers(
    pytester: pytest.Pytester, tokens: dict[str, str]
) -> None:
    # A subprocess: the target starts (and is refused) while pytest configures itself.
    result = pytester.runpytest_subprocess("--mcp-target", bearer_target())
    assert result.ret == pytest.ExitCode.INTERRUPTED
    said = result.stdout.lines + result.stderr.lines
    assert [line for line in said if REFUSED in line], said
    assert not [line for line in said if "Server returned an error response" in line], said


def test_with_mcp_header_the_target_is_audited_and_no_output_carries_the_token(
    pytester: pytest.Pytester, tokens: dict[str, str]
) -> None:
    result = pytester.runpytest(
        "--mcp-target",
        bearer_target(),
        "--mcp-header",
        "Authorization: Bearer ${ALICE_TOKEN}",
        "-k",
        "MCA-REPLAY or control",
        "--mcp-report-dir",
        "out",
        "--junitxml",
        "out/junit.xml",
    )
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=7, skipped=1)
    result.stdout.fnmatch_lines(["mcp-confirm-audit: headers Authorization: Bearer ***"])
    assert (pytester.path / "out" / "audit.json").is_file()
    assert tokens["alice"] not in every_output(pytester, result)


def test_the_ini_twin_carries_the_header_too(pytester: pytest.Pytester, tokens: dict[str, str]) -> None:
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "mcp_header =\n    Authorization: Bearer ${ALICE_TOKEN}\n"
    )
    result = pytester.runpytest("--mcp-target", bearer_target(), "-k", "control")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=4, skipped=1)


def test_a_profile_with_headers_and_a_principal_runs_cross_principal_and_leaks_neither_token(
    pytester: pytest.Pytester, tokens: dict[str, str]
) -> None:
    profile = pytester.path / "bearer.yaml"
    profile.write_text(
        f"command: {bearer_target()}\n"
        "tool: delete_file\n"
        'headers: {Authorization: "Bearer ${ALICE_TOKEN}"}\n'
        'principals: {mallory: {headers: {Authorization: "Bearer ${MALLORY_TOKEN}"}}}\n'
    )
    result = pytester.runpytest(
        "--mcp-profile", str(profile), "-k", "XPRINCIPAL or control", "--mcp-report-dir", "out", "-rs"
    )
    assert result.ret == pytest.ExitCode.OK
    # Three refused by the SDK's principal binding; the identity-claim attack needs identity_header.
    result.assert_outcomes(passed=7, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "mcp-confirm-audit: principal mallory: Authorization: Bearer ***",
            "MCA-XPRINCIPAL-001 *refused*sdk-boundary*",
            "MCA-XPRINCIPAL-004 *not_applicable*",
        ]
    )
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    claim = next(r for r in report["results"] if r["id"] == "MCA-XPRINCIPAL-004")
    assert "set identity_header: NAME in the profile" in claim["reason"]
    output = every_output(pytester, result)
    assert tokens["alice"] not in output
    assert tokens["mallory"] not in output


def test_a_header_naming_an_unset_variable_is_a_usage_error_of_one_line(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "--mcp-target", bearer_target(), "--mcp-header", "Authorization: Bearer ${NO_SUCH_TOKEN_SET}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--mcp-header: header Authorization names ${NO_SUCH_TOKEN_SET}, which is not set*"]
    )


def test_a_token_on_the_targets_command_line_is_redacted_everywhere_as_its_header_is(
    pytester: pytest.Pytester, tokens: dict[str, str]
) -> None:
    # Real servers take their token as `--token T`; the reports show the command line.
    words = [sys.executable, str(SERVER), "--root", "{root}", "--transport", "http", "--port", "{port}"]
    command = shlex.join([*words, "--auth", "bearer", "--token", tokens["alice"]])
    # Beside the run's folder, not in it: the profile holds the token, as the command line does.
    profile = pytester.path.parent / f"{pytester.path.name}-bearer.yaml"
    profile.write_text(
        f"command: {json.dumps(command)}\ntool: delete_file\n"
        'headers: {Authorization: "Bearer ${ALICE_TOKEN}"}\n'
        'env: {ALICE_AGAIN: {value: "${ALICE_TOKEN}", secret: true}, PLAIN: "${MALLORY_TOKEN}"}\n'
    )
    result = pytester.runpytest(
        "--mcp-profile",
        str(profile),
        "-k",
        "MCA-REPLAY-001 or control",
        "--mcp-report-dir",
        "out",
        "--junitxml",
        "out/junit.xml",
    )
    assert result.ret == pytest.ExitCode.OK
    reported = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert reported["target"]["command"].endswith("--auth bearer --token ***")
    assert "--token ***" in (pytester.path / "out" / "review.md").read_text()
    assert "--token ***" in (pytester.path / "out" / "audit.sarif").read_text()
    assert tokens["alice"] not in every_output(pytester, result)
