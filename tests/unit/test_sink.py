"""The `sink` effect: a real loopback HTTP server that records what the target sent it."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.request
from pathlib import Path

import pytest
from deadline import deadline
from probe_env import FakeEnv, observe

from mcp_confirm_audit.oracle.effect_spec import parse_effect
from mcp_confirm_audit.oracle.effects import changes
from mcp_confirm_audit.oracle.kinds.sink import MAX_BODY, Sink


def post(url: str, body: bytes, **headers: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=deadline(10)) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def sink_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("mcp-sink")]


def test_a_webhook_the_action_sent_is_recorded_with_its_json_body(tmp_path: Path) -> None:
    with Sink() as sink:
        assert sink.url.startswith("http://127.0.0.1:")
        env, spec = FakeEnv(tmp_path, sink=sink), parse_effect({"sink": True}, "pay.yaml")
        before = observe(spec, env)
        status, reply = post(
            f"{sink.url}/api/payments?dry_run=0",
            json.dumps({"payee": "acme", "amount_cents": 500}).encode(),
            **{"Content-Type": "application/json", "Authorization": "Bearer s3cret", "Cookie": "sid=1"},
        )
        after = observe(spec, env)
    assert (status, json.loads(reply)) == (200, {"ok": True})
    assert before == []
    assert after == [
        {
            "seq": 1,
            "method": "POST",
            "path": "/api/payments",
            "query": {"dry_run": ["0"]},
            "headers": {
                "content-type": "application/json",
                "authorization": "<redacted>",
                "cookie": "<redacted>",
            },
            "body": {"payee": "acme", "amount_cents": 500},
        }
    ]
    assert "s3cret" not in json.dumps(after)
    assert changes("sink", before, after) == ["sink[0]"]


def test_a_body_that_is_not_json_is_kept_as_text_and_binary_as_a_digest() -> None:
    with Sink() as sink:
        post(
            f"{sink.url}/form",
            b"amount=5&payee=acme",
            **{"Content-Type": "application/x-www-form-urlencoded"},
        )
        post(f"{sink.url}/blob", b"\xff\xfe\x00")
        first, second = sink.requests()
    assert first["body"] == "amount=5&payee=acme"
    assert second["body"]["size"] == 3
    assert [first["seq"], second["seq"]] == [1, 2]


def test_any_method_is_answered_and_recorded() -> None:
    with Sink() as sink:
        host, port = sink.url.removeprefix("http://").split(":")
        for method in ("GET", "PUT", "DELETE", "PATCH", "PROPFIND"):
            connection = http.client.HTTPConnection(host, int(port), timeout=deadline(10))
            connection.request(method, "/thing/1")
            assert connection.getresponse().status == 200
            connection.close()
        assert [r["method"] for r in sink.requests()] == ["GET", "PUT", "DELETE", "PATCH", "PROPFIND"]
        assert sink.requests()[0]["body"] is None


def test_the_sink_answers_with_the_reply_it_is_told_to_give() -> None:
    # A payment gate checks its provider's answer: the sink can play a provider that declines.
    with Sink(reply=(402, {"error": "card declined"})) as sink:
        assert post(f"{sink.url}/charge", b"{}") == (402, b'{"error": "card declined"}')
        sink.answer_with(201, {"id": "tx_1"})
        assert post(f"{sink.url}/charge", b"{}") == (201, b'{"id": "tx_1"}')
    with pytest.raises(ValueError, match="HTTP status"):
        Sink(reply=(42, {}))


def test_a_body_larger_than_the_cap_is_kept_in_part_and_said_so() -> None:
    with Sink() as sink:
        status, _ = post(f"{sink.url}/upload", b"x" * (MAX_BODY + 10))
        (request,) = sink.requests()
    assert status == 200
    assert len(request["body"]) == MAX_BODY
    assert "longer than" in request["truncated"]


def test_a_chunked_body_is_read() -> None:
    with Sink() as sink:
        host, port = sink.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=deadline(10))
        connection.request("POST", "/stream", body=iter([b'{"amount"', b": 5}"]), encode_chunked=True)
        assert connection.getresponse().status == 200
        connection.close()
        assert sink.requests()[0]["body"] == {"amount": 5}


def test_only_the_latest_requests_are_kept_and_a_new_one_always_shows() -> None:
    with Sink(max_requests=2) as sink:
        for _ in range(3):
            post(f"{sink.url}/beat", b"{}")
        assert [r["seq"] for r in sink.requests()] == [2, 3]
        assert sink.received == 3


def test_close_leaves_no_thread_even_with_a_client_that_stopped_mid_request() -> None:
    sink = Sink()
    host, port = sink.url.removeprefix("http://").split(":")
    stalled = socket.create_connection((host, int(port)), timeout=deadline(10))
    stalled.sendall(b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")  # and then nothing
    post(f"{sink.url}/ok", b"{}")  # the sink still serves others meanwhile
    assert [r["path"] for r in sink.requests()] == ["/ok"]
    sink.close()
    sink.close()  # twice is harmless
    stalled.close()
    assert sink_threads() == []


def test_the_sink_listens_on_loopback_only() -> None:
    with Sink() as sink:
        assert sink._server.server_address[0] == "127.0.0.1"
