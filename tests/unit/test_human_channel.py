"""The person's HTTP channel: what it sends, where it may send it, and one line for each way it fails."""

from __future__ import annotations

import http.server
import json
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from deadline import deadline

from mcp_confirm_audit.channels.human import Command, HttpCall, Where, base_url, run
from mcp_confirm_audit.confirmations.base import HumanFailed
from mcp_confirm_audit.confirmations.pending import Human, Pending
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.profile.headers import Header
from mcp_confirm_audit.profile.loader import Profile, profile_from_mapping, resolve_profile


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Answers every request with the status its path asks for (`/status/302`), 200 otherwise."""

    seen: list[tuple[str, str, dict[str, str], bytes]]

    def _answer(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append((self.command, self.path, dict(self.headers), body))
        if self.path == "/endless":
            self._endless()
            return
        status = int(self.path.split("/")[2]) if self.path.startswith("/status/") else 200
        self.send_response(status)
        if status == 302:
            self.send_header("Location", "http://approvals.example.com/elsewhere")
        self.end_headers()
        self.wfile.write(b"ok\nsecret-approver-token echoed")

    def _endless(self) -> None:
        self.send_response(200)
        self.end_headers()
        try:
            while True:
                self.wfile.write(b"x" * 65536)
        except OSError:
            pass  # the harness stopped reading and hung up

    do_POST = do_PUT = do_GET = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[tuple[str, str, dict[str, str], bytes]]]]:
    seen: list[tuple[str, str, dict[str, str], bytes]] = []
    handler = type("Recorder", (_Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=deadline(10))


APPROVER = Header("Authorization", "Bearer secret-approver-token")


@pytest.mark.anyio
async def test_the_request_carries_the_id_and_only_the_headers_the_step_names(
    endpoint: tuple[str, list[tuple[str, str, dict[str, str], bytes]]], tmp_path: Path
) -> None:
    url, seen = endpoint
    step = HttpCall("{url}/approvals/{id}", "POST", {"decision": "approved", "for": ["{id}"]}, (APPROVER,))
    said = await run(step.with_id("ab12"), Where(tmp_path, 5.0, url))
    [(method, path, headers, body)] = seen
    assert (method, path) == ("POST", "/approvals/ab12")
    assert json.loads(body) == {"decision": "approved", "for": ["ab12"]}
    assert headers["Authorization"] == "Bearer secret-approver-token"
    # What the run keeps: the request, the credential redacted, the answer scrubbed of it and on one line.
    assert said == f"POST {url}/approvals/ab12 (Authorization: Bearer ***): HTTP 200 ok *** echoed"


@pytest.mark.anyio
async def test_an_id_the_target_chose_stays_one_path_segment_and_one_word(
    endpoint: tuple[str, list[tuple[str, str, dict[str, str], bytes]]], tmp_path: Path
) -> None:
    url, seen = endpoint
    await run(HttpCall("{url}/approvals/{id}").with_id("../admin?all=1#"), Where(tmp_path, 5.0, url))
    assert seen[0][1] == "/approvals/..%2Fadmin%3Fall%3D1%23"
    hostile = Command("python3 -c 'import sys; print(sys.argv[1:])' {id} approved").with_id("x --inbox /etc")
    said = await run(hostile, Where(tmp_path, 10.0))
    assert said.endswith(": ['x --inbox /etc', 'approved']")


@pytest.mark.anyio
async def test_an_endless_answer_is_read_only_as_far_as_the_evidence_needs(
    endpoint: tuple[str, list[tuple[str, str, dict[str, str], bytes]]], tmp_path: Path
) -> None:
    url, _ = endpoint
    said = await run(HttpCall(f"{url}/endless"), Where(tmp_path, 10.0))
    assert said.startswith(f"POST {url}/endless: HTTP 200 xxxx")


@pytest.mark.anyio
async def test_a_redirect_is_not_followed_and_fails(
    endpoint: tuple[str, list[tuple[str, str, dict[str, str], bytes]]], tmp_path: Path
) -> None:
    url, seen = endpoint
    with pytest.raises(
        HumanFailed, match=r"^the approval endpoint answered POST .*/status/302 with HTTP 302: "
    ):
        await run(HttpCall(f"{url}/status/302"), Where(tmp_path, 5.0))
    assert len(seen) == 1  # it went nowhere else


@pytest.mark.anyio
async def test_an_endpoint_that_never_answers_fails_at_the_call_timeout(tmp_path: Path) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # accepts the connection, never reads or answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/approvals/x"
        with pytest.raises(HumanFailed, match=r"^the approval endpoint did not answer POST .* within 0\.2s$"):
            await run(HttpCall(url), Where(tmp_path, 0.2))


@pytest.mark.anyio
async def test_the_target_url_is_needed_for_url_and_must_be_on_loopback(tmp_path: Path) -> None:
    with pytest.raises(HumanFailed, match=r"names \{url\}, but the target is not served over HTTP"):
        await run(HttpCall("{url}/approvals/x"), Where(tmp_path, 5.0, None))
    # A URL target elsewhere: the harness's requests stay on this machine.
    with pytest.raises(HumanFailed, match="is not on loopback"):
        await run(HttpCall("{url}/approvals/x"), Where(tmp_path, 5.0, "https://mcp.example.com"))


@pytest.mark.anyio
async def test_a_command_step_still_runs_in_the_root(tmp_path: Path) -> None:
    said = await run(
        Command("python3 -c 'import os; print(os.getcwd())' {id}").with_id("ab"), Where(tmp_path, 10.0)
    )
    assert said.endswith(f": {tmp_path}")


@pytest.mark.anyio
async def test_a_command_from_a_deep_checkout_still_shows_what_it_printed_within_the_evidence_clip(
    tmp_path: Path,
) -> None:
    # `{profile_dir}` puts the checkout's path in the line: a deep one cut what the person's command
    # printed out of the 160 characters an honest flow keeps of each step.
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 8)
    deep.mkdir(parents=True)
    (deep / "approve.py").write_text("print('approved request 7')\n")
    said = await run(Command(f"python {deep}/approve.py --request 7 --home {{root}}"), Where(tmp_path, 10.0))
    assert said[:160].endswith("--request 7 --home {root}': approved request 7"), said
    assert said.startswith("ran 'python /")
    assert "…" in said


@pytest.mark.anyio
async def test_a_command_steps_python_is_the_audits_interpreter_as_the_targets_is(tmp_path: Path) -> None:
    # A profile's `python` means one interpreter for the server and for the person's commands: the
    # one running the audit, also where a venv is not activated and PATH's python is another.
    said = await run(Command("python -c 'import sys; print(sys.executable)'"), Where(tmp_path, 10.0))
    assert said.endswith(f": {sys.executable}")


def test_the_base_url_is_the_endpoints_scheme_host_and_port() -> None:
    assert base_url("http://127.0.0.1:8123/mcp") == "http://127.0.0.1:8123"
    assert base_url(None) is None
    assert base_url(object()) is None


def _pending(human: object, **target: object) -> Profile:
    raw = {"command": "srv --root {root} --port {port}", **target}
    confirmation = {"kind": "pending", "pending": {"human": human}}
    return resolve_profile(
        profile_from_mapping({**raw, "confirmation": confirmation}, source="p.yaml"), None, None
    )


def test_the_http_channel_as_a_profile_states_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APPROVER_TOKEN", "secret-approver-token")
    approve = {
        "url": "{url}/approvals/{id}",
        "json": {"decision": "approved"},
        "headers": {"Authorization": "Bearer ${APPROVER_TOKEN}"},
    }
    decline = {"url": "http://localhost:9/approvals/{id}", "method": "put", "json": {"decision": "declined"}}
    stated = _pending({"http": approve, "decline": {"http": decline}})
    assert isinstance(stated.confirmation, Pending)
    assert stated.confirmation.human == Human(
        (HttpCall("{url}/approvals/{id}", "POST", {"decision": "approved"}, (APPROVER,)),),
        (HttpCall("http://localhost:9/approvals/{id}", "PUT", {"decision": "declined"}),),
    )
    # A credential: scrubbed from whatever the run keeps, and never in a repr.
    assert APPROVER in tuple(stated.every_header())
    assert "secret-approver-token" not in repr(stated)


def test_the_command_strings_read_as_before_and_a_decline_may_go_another_way() -> None:
    human = _pending({"command": "approve {id}", "decline": "decline {id}"}).confirmation.human  # type: ignore[union-attr]
    assert human == Human((Command("approve {id}"),), (Command("decline {id}"),))
    over_http = {"http": {"url": "http://[::1]:9/d/{id}"}}
    human = _pending({"command": "approve {id}", "decline": over_http}).confirmation.human  # type: ignore[union-attr]
    assert human == Human((Command("approve {id}"),), (HttpCall("http://[::1]:9/d/{id}"),))


@pytest.mark.parametrize(
    ("human", "message"),
    [
        ({"http": {"url": "https://approvals.example.com/{id}"}}, "is not on loopback"),
        ({"http": {"url": "http://10.0.0.1:80/{id}"}}, "is not on loopback"),
        ({"http": {"url": "ftp://127.0.0.1/{id}"}}, "is not an http:// or https:// URL"),
        ({"http": {"url": "http://127.0.0.1/a?next={url}&id={id}"}}, "may use {url} only at its start"),
        ({"http": {"url": "{url}.example.com/{id}"}}, "must go on with a path after {url}"),
        ({"http": {"url": "{url}/approvals/{pending}"}}, "names {pending}; the harness fills only"),
        ({"http": {"url": "{url}/approvals"}}, "must say {id}"),
        ({"http": {"url": "{url}/{id}", "method": "FETCH"}}, "'method' must be one of POST"),
        ({"http": {"url": "{url}/{id}", "body": {}}}, "pending.human.http: unknown key 'body'"),
        ({"http": {"url": "{url}/{id}", "headers": {"A": "${NOT_SET_ANYWHERE}"}}}, "NOT_SET_ANYWHERE"),
        ({"command": "a {id}", "http": {"url": "{url}/{id}"}}, "takes 'command' or 'http', not both"),
        ({"decline": "d {id}"}, "pending.human needs 'command'"),
        (
            {"command": "a {id}", "decline": {"http": {"url": "https://x.test/{id}"}}},
            "decline.http: 'url' must be",
        ),
    ],
)
def test_each_mistake_in_the_http_channel_is_one_line(human: object, message: str) -> None:
    with pytest.raises(UsageError, match=r"^profile p\.yaml: confirmation[.:] ?pending\.human") as caught:
        _pending(human)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_url_needs_a_target_served_over_http_on_loopback() -> None:
    step = {"http": {"url": "{url}/approvals/{id}"}}
    with pytest.raises(UsageError, match=r"this target speaks stdio; serve it over HTTP"):
        _pending(step, command="srv --root {root}")
    with pytest.raises(
        UsageError, match=r"names \{url\}, the target's base URL, and 'https://mcp\.example\.com/mcp'"
    ):
        _pending(step, command="https://mcp.example.com/mcp", root=".")
    # Served or reached on loopback, it is fine.
    assert _pending(step, command="http://127.0.0.1:8000/mcp", root=".").confirmation is not None
