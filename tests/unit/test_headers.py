"""Headers: read once, with `${NAME}` from the environment, sent, and never shown."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx2
import pytest

from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.models import AttackSpec, Exchange, Outcome, Phase, Precondition, Response, Verdict
from mcp_confirm_audit.oracle.sandbox import Sandbox
from mcp_confirm_audit.profile.headers import Header, overlay, parse, scrub, secret_values
from mcp_confirm_audit.profile.loader import load_profile, resolve_profile
from mcp_confirm_audit.target.discovery import ToolPlan
from mcp_confirm_audit.target.driver import CREDENTIALS_REFUSED, Connection, Refusals, stderr_tail
from mcp_confirm_audit.techniques.base import Attack

TOKEN = "s3cr3t-token-value"
HTTP = "server --root {root} --port {port}"


def test_a_value_is_redacted_to_its_scheme_and_never_in_a_repr() -> None:
    bearer, claim = Header("Authorization", f"Bearer {TOKEN}"), Header("X-MCP-User", "alice")
    assert (bearer.redacted, claim.redacted) == ("Authorization: Bearer ***", "X-MCP-User: ***")
    assert TOKEN not in repr(bearer)
    assert "alice" not in repr(claim)


def test_a_header_names_an_environment_variable_and_one_not_set_is_one_line_naming_it() -> None:
    header = parse(
        "Authorization: Bearer ${ALICE_TOKEN}", source="--mcp-header", environ={"ALICE_TOKEN": TOKEN}
    )
    assert header == Header("Authorization", f"Bearer {TOKEN}")
    with pytest.raises(UsageError, match=r"names \$\{MISSING\}, which is not set.*export MISSING") as caught:
        parse("Authorization: Bearer ${MISSING}", source="--mcp-header", environ={})
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("text", ["just-a-token-without-a-name", "Bad Name: x", "X-Empty:"])
def test_a_malformed_header_is_refused_without_echoing_it(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse(text, source="--mcp-header", environ={})
    assert "just-a-token" not in str(caught.value)


def test_a_header_given_again_replaces_the_profiles_whatever_its_case() -> None:
    base = (Header("Authorization", "Bearer a"), Header("X-Tenant", "t"))
    assert overlay(base, [Header("authorization", "Bearer b")]) == (
        Header("X-Tenant", "t"),
        Header("authorization", "Bearer b"),
    )


def test_a_targets_stderr_is_scrubbed_of_every_value_the_harness_sent(tmp_path: Path) -> None:
    log = tmp_path / "target.stderr"
    log.write_text(f"got Authorization: Bearer {TOKEN}\nand the bare token {TOKEN}\n")
    secrets = [Header("Authorization", f"Bearer {TOKEN}")]
    assert TOKEN not in stderr_tail(log, secrets=secret_values(secrets))
    assert scrub(f"x {TOKEN} y", secrets) == "x *** y"


def test_a_targets_stderr_tail_is_its_last_lines_that_say_something(tmp_path: Path) -> None:
    # A logging library's output (rich's) wraps a record over lines and leaves blank ones between:
    # a blank line is no line of the tail, which would otherwise quote nothing.
    log = tmp_path / "target.stderr"
    log.write_text("early\n\n[12:00:00] WARNING  Starting MCP server 'Dev  transport.py:241\n\n   Utils'\n\n")
    assert (
        stderr_tail(log) == "early | [12:00:00] WARNING  Starting MCP server 'Dev  transport.py:241 | Utils'"
    )


def test_a_servers_routine_request_log_never_crowds_out_why_a_call_failed(tmp_path: Path) -> None:
    # Trial 14: every failed control ended with the SDK's own "Processing request" lines, three of them,
    # in place of the error the server printed before them. INFO and DEBUG records, in the shapes
    # logging's default format, rich and a dashed format print, and the lines rich wraps them onto, are
    # not the tail; a warning, an error and a traceback are, and so is a line that only mentions INFO.
    log = tmp_path / "target.stderr"
    log.write_text(
        "Traceback (most recent call last):\n"
        "ValueError: no such order\n"
        "INFO config: INFO is missing, using defaults\n"
        "INFO:mcp.server.lowlevel.server:Processing request of type CallToolRequest\n"
        "[12/07/26 18:00:00] INFO     Processing request of type         server.py:523\n"
        "                             CallToolRequest\n"
        "2026-12-07 18:00:00,123 - orders - DEBUG - looked up 4417\n"
        "DEBUG:orders:cache hit\n"
    )
    assert stderr_tail(log) == (
        "Traceback (most recent call last): | ValueError: no such order | INFO config: INFO is missing, using defaults"
    )


def test_a_profile_reads_headers_principals_and_the_identity_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALICE_TOKEN", TOKEN)
    monkeypatch.setenv("MALLORY_TOKEN", "another-token")
    path = tmp_path / "p.yaml"
    path.write_text(
        f"command: {HTTP}\n"
        'headers: {Authorization: "Bearer ${ALICE_TOKEN}"}\n'
        'principals: {mallory: {headers: {Authorization: "Bearer ${MALLORY_TOKEN}"}}}\n'
        "identity_header: X-MCP-User\n"
    )
    profile = resolve_profile(load_profile(path), None, None)
    assert profile.headers == (Header("Authorization", f"Bearer {TOKEN}"),)
    assert profile.principals == {"mallory": (Header("Authorization", "Bearer another-token"),)}
    assert profile.identity_header == "X-MCP-User"
    assert TOKEN not in repr(profile)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "command: srv {root}\nheaders: {Authorization: x-token}\n",
            "sent over HTTP, and this target speaks stdio",
        ),
        (f"command: {HTTP}\nheaders: [Authorization]\n", "'headers' must be a mapping"),
        (
            f"command: {HTTP}\nprincipals: {{mallory: {{token: x}}}}\n",
            "principals.mallory: unknown key 'token'",
        ),
        (
            f"command: {HTTP}\nprincipals: {{mallory: {{headers: {{}}}}}}\n",
            "principals.mallory: 'headers' must be a non-empty mapping of header names to strings, got {}",
        ),
        (
            f"command: {HTTP}\nprincipals: {{'two words': {{headers: {{A: b}}}}}}\n",
            r"must be a mapping of short names \(a word, e.g. mallory\).*the name 'two words' does not fit",
        ),
        (f"command: {HTTP}\nheaders: {{A: '${{NOT_SET_ANYWHERE}}'}}\n", "NOT_SET_ANYWHERE"),
    ],
)
def test_a_bad_header_setting_names_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        resolve_profile(load_profile(path), None, None)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_401_during_a_call_is_a_transport_answer_naming_the_credentials_never_a_refusal() -> None:
    # What the SDK's transport turns a 401 into: a generic error, the status lost; the
    # connection's hook on its HTTP client saw the 401 and the scheme the target asked for.
    refusals = Refusals()
    connection = Connection("primary", client=None, call_timeout=5.0, stderr_path=None, refusals=refusals)  # type: ignore[arg-type]
    unauthorised = httpx2.Response(401, headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})

    async def send() -> Response:
        await refusals.record(unauthorised)
        return Response(Outcome.RPC_ERROR, text="Server returned an error response", code=-32603)

    response = await connection._guarded(send)
    assert response.outcome is Outcome.TRANSPORT
    assert response.text == (
        f"{CREDENTIALS_REFUSED} (HTTP 401, WWW-Authenticate: Bearer): set headers: in the profile or pass --mcp-header"
    )


@pytest.mark.anyio
async def test_a_credentials_refusal_in_the_middle_of_an_attack_is_inconclusive_never_refused() -> None:
    spec = AttackSpec(
        "MCA-XPRINCIPAL-001", "s", "cross-principal", "t", "critical", "MUST", "cross-principal"
    )
    refusals = Refusals()
    connection = Connection("primary", client=None, call_timeout=5.0, stderr_path=None, refusals=refusals)  # type: ignore[arg-type]

    async def refused_on_the_wire(*_: object, **__: object) -> Exchange:
        response = await connection._guarded(_unauthorised(refusals))
        return Exchange(Phase.ATTACK, "redeem", "primary", {"name": "delete_file"}, response)

    connection.call = refused_on_the_wire  # type: ignore[method-assign]
    sandbox = Sandbox()
    try:
        attack = Attack(
            spec,
            ToolPlan("delete_file", "path"),
            "relative",
            sandbox,
            sandbox.new_case(),
            connection,
            _no_other,
        )
        await attack.start_attack()
        await attack.call("redeem", attack.case.victim)
        result = judge(spec, attack.transcript(Precondition(True)))
    finally:
        sandbox.remove()
    # Judged as an attack that could not be set up, not as a target that stopped answering
    # (which, the same input on two processes, the robustness family would call weak).
    assert result.verdict is Verdict.INCONCLUSIVE
    assert result.reason.startswith(f"could not set the attack up: {CREDENTIALS_REFUSED} (HTTP 401")


def _unauthorised(refusals: Refusals) -> Callable[[], Awaitable[Response]]:
    async def send() -> Response:
        await refusals.record(httpx2.Response(401, headers={"WWW-Authenticate": "Bearer"}))
        return Response(Outcome.RPC_ERROR, text="Server returned an error response", code=-32603)

    return send


async def _no_other() -> Connection:
    raise AssertionError("not used")
