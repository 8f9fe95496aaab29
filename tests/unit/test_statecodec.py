"""Forgeries of a real state, and reading states a client should not be able to read."""

from __future__ import annotations

import base64
import json

import pytest

from mcp_confirm_audit.confirmations import statecodec

SDK_LIKE = "v1." + base64.urlsafe_b64encode(bytes(range(64))).decode().rstrip("=")


@pytest.mark.parametrize("mutation", statecodec.MUTATIONS)
def test_every_mutation_changes_an_sdk_token(mutation: str) -> None:
    mutated = statecodec.mutate(SDK_LIKE, mutation)
    assert mutated is not None
    assert mutated != SDK_LIKE


def test_non_canonical_base64_decodes_to_the_same_bytes_under_a_lenient_decoder() -> None:
    body = SDK_LIKE[3:]
    mutated = statecodec.mutate(SDK_LIKE, "non-canonical-base64")
    assert mutated is not None
    lenient = base64.b64decode(mutated[3:].replace("-", "+").replace("_", "/") + "=" * (-len(body) % 4))
    assert lenient == base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))


def test_an_sdk_token_is_opaque() -> None:
    assert statecodec.decode(SDK_LIKE) is None


@pytest.mark.parametrize(
    "state",
    [
        '{"path": "a/victim.txt", "nonce": "n"}',
        base64.urlsafe_b64encode(b'{"path": "a/victim.txt", "k": "??>"}').decode().rstrip("="),
        base64.b64encode(b'{"path": "a/victim.txt", "k": "??>"}').decode(),
    ],
    ids=["json", "base64url-json", "base64-json"],
)
def test_readable_states_are_recognised_and_retargeted(state: str) -> None:
    readable = statecodec.decode(state)
    assert readable is not None
    edited = statecodec.retarget(readable, ["a/victim.txt"], ["a/canary.txt"])
    assert edited is not None
    again = statecodec.decode(edited)
    assert again is not None
    assert json.loads(again.text)["path"] == "a/canary.txt"


def test_a_readable_state_that_does_not_name_the_file_cannot_be_retargeted() -> None:
    readable = statecodec.decode('{"nonce": "abc"}')
    assert readable is not None
    assert statecodec.retarget(readable, ["victim.txt"], ["canary.txt"]) is None


def test_a_signed_readable_state_is_edited_in_its_payload_and_keeps_its_tag() -> None:
    payload = base64.urlsafe_b64encode(b'{"path": "a/victim.txt"}').decode().rstrip("=")
    state = f"{payload}.c2lnbmF0dXJl"
    readable = statecodec.decode(state)
    assert readable is not None
    assert readable.encoding == "signed-json"
    edited = statecodec.retarget(readable, ["a/victim.txt"], ["a/canary.txt"])
    assert edited is not None
    assert edited.endswith(".c2lnbmF0dXJl")
    assert edited != state


def test_mutations_of_a_signed_state_forge_its_tag() -> None:
    payload = base64.urlsafe_b64encode(b'{"path": "a"}').decode().rstrip("=")
    state = f"{payload}.{base64.urlsafe_b64encode(bytes(range(32))).decode().rstrip('=')}"
    mutated = statecodec.mutate(state, "flip-last-byte")
    assert mutated is not None
    assert mutated.startswith(payload + ".")
    assert mutated != state
