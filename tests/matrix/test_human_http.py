"""The person approves on the server's own HTTP endpoint: a second channel the agent's connection lacks.

The careful pending server (targets/confirm_kinds) served over Streamable HTTP,
started by the harness on a free loopback port, with its approval route
beside `/mcp`; the harness plays the person with `human: {http: ...}`. When
that endpoint fails, nothing can be judged.
"""

from __future__ import annotations

import http.server
import shlex
import socket
import sys
import threading
from collections.abc import Collection, Iterator

import pytest
from conftest import MATRIX_GENERATION
from deadline import deadline, scaled
from test_confirmation_kinds import FAMILIES, HUMAN_CHANNEL, KINDS_SERVER, audit

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping, resolve_profile

# The person's credential for the approval route; the agent's connection is never given it.
APPROVER_TOKEN = "approver-7f3c9a1e-only-the-person"


def _decision(decision: str, url: str = "{url}/approvals/{id}") -> dict[str, object]:
    return {
        "http": {
            "url": url,
            "method": "POST",
            "json": {"decision": decision},
            "headers": {"Authorization": "Bearer ${MCA_TEST_APPROVER_TOKEN}"},
        }
    }


def _pending_over(approve: dict[str, object], decline: dict[str, object] | None = None) -> dict[str, object]:
    human = {**approve, **({"decline": decline} if decline else {})}
    return {
        "confirmation": {
            "kind": "pending",
            "pending": {
                "id_from": "pending_id",
                "human": human,
                "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
            },
        }
    }


@pytest.fixture(autouse=True)
def approver_token(monkeypatch: pytest.MonkeyPatch) -> None:
    # Read by the profile's `${...}` (the harness) and by --approver-token-env (the server it starts).
    monkeypatch.setenv("MCA_TEST_APPROVER_TOKEN", APPROVER_TOKEN)


def _audit_served_pending_server(
    catalogue: Catalogue, families: Collection[str] = FAMILIES, **settings: object
) -> AuditRun:
    """The server as a process the harness starts on a free loopback port, reached over Streamable HTTP."""
    words = [sys.executable, str(KINDS_SERVER), "--root", "{root}", "--mechanism", "pending"]
    words += ["--transport", "http", "--port", "{port}", "--approver-token-env", "MCA_TEST_APPROVER_TOKEN"]
    raw = {"command": shlex.join(words), "tool": "delete_file", "call_timeout": 10.0, **settings}
    # Its start and round trips bounded by the suite's one scale (tests/deadline.py), as every matrix's are.
    profile = scaled(resolve_profile(profile_from_mapping(raw, source="test"), None, None))

    def select(spec: AttackSpec) -> bool:
        return spec.family in families

    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def test_the_careful_pending_server_approved_on_its_own_http_endpoint_refuses_every_family(
    catalogue: Catalogue,
) -> None:
    run = _audit_served_pending_server(
        catalogue, **_pending_over(_decision("approved"), _decision("declined"))
    )
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, run.controls
    # As with the human's command: nothing acts without the person, and the store is the tool's own check.
    judged = [r for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE]
    assert {(r.verdict, r.layer) for r in judged} == {(Verdict.REFUSED, Layer.TOOL)}, [
        (r.id, r.verdict, r.layer, r.reason) for r in judged
    ]
    assert {r.family for r in judged} <= set(FAMILIES)
    # Exactly as when the person approves with a command.
    by_command = audit(catalogue, "pending", **HUMAN_CHANNEL)
    assert {r.id: (r.verdict, r.layer) for r in run.results} == {
        r.id: (r.verdict, r.layer) for r in by_command.results
    }
    # Declined on the endpoint, then executed: the store refuses it.
    declined = run.by_id()["MCA-TOKREUSE-002"]
    assert (declined.verdict, declined.layer) == (Verdict.REFUSED, Layer.TOOL), declined.evidence
    assert "declined" in declined.reason
    said = " ".join(declined.evidence)
    assert "the human declines" in said
    assert "POST http://127.0.0.1:" in said
    # The person's credential reached the route (else 401) and nothing the run kept shows it.
    assert "Authorization: Bearer ***" in said
    assert APPROVER_TOKEN not in repr(run.results) + repr(run.controls)


def test_the_agents_own_credentials_do_not_approve(catalogue: Catalogue) -> None:
    # The profile gives the agent's connection the very token the route wants; the person's request
    # carries only the headers its own http: names (none here), so the route says 401 and nothing is judged.
    unsigned = {"http": {"url": "{url}/approvals/{id}", "json": {"decision": "approved"}}}
    run = _audit_served_pending_server(
        catalogue, headers={"Authorization": "Bearer ${MCA_TEST_APPROVER_TOKEN}"}, **_pending_over(unsigned)
    )
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed
    assert "HTTP 401" in approve.detail, approve.detail
    assert {r.verdict for r in run.results} == {Verdict.INCONCLUSIVE}


def test_another_identity_on_the_approval_route_approves_nothing(
    catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    # approver-identity on a careful server of another style (its route takes one approver's token, over
    # HTTP): mallory, another identity the target authenticates, calls the person's route with her own.
    monkeypatch.setenv("MCA_TEST_MALLORY_TOKEN", "mallory-0d4e-not-the-approver")
    run = _audit_served_pending_server(
        catalogue,
        families={"approver-identity"},
        principals={"mallory": {"headers": {"Authorization": "Bearer ${MCA_TEST_MALLORY_TOKEN}"}}},
        **_pending_over(_decision("approved")),
    )
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    result = run.by_id()["MCA-OOBWHO-001"]
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (result.reason, result.evidence)
    assert "turned principal mallory away" in " ".join(result.evidence)
    assert "HTTP 401" in " ".join(result.evidence)


class _Answers500(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.send_response(500)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"approval store unavailable")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def failing_endpoint() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers500)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=deadline(10))


def _nothing_listening() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.mark.parametrize(
    ("endpoint", "said"),
    [("answers 500", "answered POST http://127.0.0.1:"), ("refuses", "could not be reached")],
)
def test_an_approval_endpoint_that_fails_leaves_every_attack_inconclusive(
    catalogue: Catalogue, failing_endpoint: str, endpoint: str, said: str
) -> None:
    base = failing_endpoint if endpoint == "answers 500" else _nothing_listening()
    run = audit(catalogue, "pending", **_pending_over(_decision("approved", f"{base}/approvals/{{id}}")))
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed
    assert said in approve.detail, approve.detail
    if endpoint == "answers 500":
        assert "HTTP 500: approval store unavailable" in approve.detail
    # Controls first: an honest flow that cannot be completed judges nothing.
    assert {r.verdict for r in run.results} == {Verdict.INCONCLUSIVE}
