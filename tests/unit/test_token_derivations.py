"""The derivation search of token-forgery: a pure function of a call and a token seen."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_confirm_audit.confirmations import derivations

KINDS = Path(__file__).resolve().parents[2] / "targets" / "confirm_kinds"
TOOL = "pay_invoice"
ARGS: dict[str, Any] = {"invoice": "INV-7", "amount": 125, "currency": "EUR"}


def _compact_sorted_sha256(tool: str, args: dict[str, Any]) -> str:
    text = json.dumps(args, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _md5_pipe_base64(tool: str, args: dict[str, Any]) -> str:
    return base64.b64encode(hashlib.md5("|".join(str(v) for v in args.values()).encode()).digest()).decode()


def _sha1_tool_pipe_sorted_urlsafe(tool: str, args: dict[str, Any]) -> str:
    text = "|".join([tool, *(str(args[k]) for k in sorted(args))])
    return base64.urlsafe_b64encode(hashlib.sha1(text.encode()).digest()).decode().rstrip("=")


def _empty_key_hmac_of_the_call(tool: str, args: dict[str, Any]) -> str:
    text = json.dumps({"name": tool, "arguments": args})
    return hmac.new(b"", text.encode(), hashlib.sha256).hexdigest()[:32]


def _prefixed_sha1(tool: str, args: dict[str, Any]) -> str:
    return hashlib.sha1(f"{tool}:{json.dumps(args)}".encode()).hexdigest()[:12]


# How a server makes its token -> how the search must name it.
SERVERS = {
    _compact_sorted_sha256: "sha256 over compact sorted JSON, hex, first 16 chars",
    _md5_pipe_base64: "md5 over '|'-joined values (in argument order), base64, whole",
    _sha1_tool_pipe_sorted_urlsafe: (
        "sha1 over '|'-joined tool name and values (sorted by name), URL-safe base64, whole, without padding"
    ),
    _empty_key_hmac_of_the_call: 'HMAC-sha256 with an empty key over JSON of {"name", "arguments"}, hex, first 32 chars',
    _prefixed_sha1: "sha1 over JSON after the tool name and ':', hex, first 12 chars",
}


@pytest.mark.parametrize("server", list(SERVERS), ids=lambda f: f.__name__.strip("_"))
def test_a_common_derivation_is_found_named_and_makes_the_token_of_a_call_nobody_previewed(
    server: Any,
) -> None:
    # A base64 token with no '+' or '/' (or '-', '_') in it is both kinds of base64: each is returned.
    found = {d.name: d for d in derivations.matching(TOOL, ARGS, server(TOOL, ARGS))}
    assert SERVERS[server] in found, list(found)
    other = {"invoice": "INV-8", "amount": 9000, "currency": "USD"}
    assert found[SERVERS[server]].make(TOOL, other) == server(TOOL, other)


def test_the_search_is_small_fixed_and_in_a_stated_order() -> None:
    tried = derivations.candidates(16)
    assert len(tried) == len(set(tried)) == 504
    assert tried == derivations.candidates(16)
    assert {d.length for d in tried} == {16}
    # The most common construction first: a hash of json.dumps(sort_keys=True), hex.
    assert tried[0].name == "sha256 over sorted JSON, hex, first 16 chars"


def test_random_tokens_and_keyed_tokens_are_not_derivable() -> None:
    draw = random.Random(0)
    secret = bytes(draw.getrandbits(8) for _ in range(32))
    keyed = hmac.new(secret, json.dumps(ARGS, sort_keys=True).encode(), hashlib.sha256).hexdigest()[:16]
    for token in (keyed, *(f"{draw.getrandbits(64):016x}" for _ in range(20))):
        assert derivations.matching(TOOL, ARGS, token) == ()
    assert derivations.search(TOOL, ARGS, "") is None


def test_constructions_that_agree_on_one_call_are_all_returned_the_first_named() -> None:
    # One argument: sorted and unsorted JSON are the same text, so the token cannot tell them apart.
    args = {"path": "notes.txt"}
    token = hashlib.sha256(json.dumps(args).encode()).hexdigest()[:16]
    found = derivations.matching("delete_file", args, token)
    assert [d.name for d in found[:2]] == [
        "sha256 over sorted JSON, hex, first 16 chars",
        "sha256 over JSON, hex, first 16 chars",
    ]
    assert {d.make("delete_file", {"path": "other.txt"}) for d in found[:2]} == {
        hashlib.sha256(b'{"path": "other.txt"}').hexdigest()[:16]
    }


def test_the_reference_servers_derived_tokens_are_found_and_its_keyed_one_is_not() -> None:
    sys.path.insert(0, str(KINDS))
    try:
        import gates  # the confirm-kinds server's token store
    finally:
        sys.path.remove(str(KINDS))
    args = {"path": "a/b.txt"}
    predictable = gates.TokenStore(frozenset({"predictable-token"})).issue("delete_file", args)
    assert derivations.search("delete_file", args, predictable) is not None
    piped = gates.TokenStore(frozenset({"pipe-joined-token"})).issue("delete_file", args)
    named = [d.name for d in derivations.matching("delete_file", args, piped)]
    assert "sha1 over '|'-joined values (in argument order), URL-safe base64, first 20 chars" in named
    keyed = gates.TokenStore(frozenset({"deterministic-keyed-token"}))
    assert keyed.issue("delete_file", args) == keyed.issue("delete_file", args)
    assert derivations.search("delete_file", args, keyed.issue("delete_file", args)) is None
    for scheme in ("random", "hmac"):
        careful = gates.TokenStore(frozenset(), scheme)
        assert careful.issue("delete_file", args) != careful.issue("delete_file", args)


# -- the arguments as the server fills them in ------------------------------------------------------

SCHEMA: dict[str, Any] = {
    "properties": {
        "invoice": {"type": "string"},
        "amount": {"type": "integer"},
        "currency": {"type": "string", "default": "EUR"},
        "note": {"type": "string", "default": "none"},
        "dry_run": {"type": "boolean", "default": False},
        "confirm_token": {"type": ["string", "null"], "default": None},
    }
}
LEAVE_OUT = ("dry_run", "confirm_token")


def test_a_digest_of_the_arguments_with_the_schemas_defaults_filled_in_is_found_and_reproduced() -> None:
    sent = {"invoice": "INV-7", "amount": 125}
    filled = {**sent, "currency": "EUR", "note": "none"}
    token = _compact_sorted_sha256(TOOL, filled)
    assert derivations.matching(TOOL, sent, token) == ()
    found = derivations.matching_views(TOOL, sent, token, SCHEMA, LEAVE_OUT)
    view, derivation = found[0]
    assert view == derivations.View(defaults=True)
    assert "with the schema's defaults filled in" in view.name
    # The same fill-in forges another call's token; the confirming call's own arguments stay out.
    other = {"invoice": "INV-8", "amount": 9000}
    made = view.of(other, SCHEMA, LEAVE_OUT)
    assert made is not None
    assert "dry_run" not in made
    assert derivation.make(TOOL, made) == _compact_sorted_sha256(
        TOOL, {**other, "currency": "EUR", "note": "none"}
    )


@pytest.mark.parametrize("joiner", derivations.JOINERS)
def test_values_joined_with_one_the_server_derives_itself_are_found(joiner: str) -> None:
    sent = {"path": "case/victim.txt"}
    digest = hashlib.sha256(b"victim text").hexdigest()
    token = hashlib.sha256(joiner.join([sent["path"], digest]).encode()).hexdigest()[:24]
    derived = {"the file's sha256": digest}
    found = derivations.matching_views(TOOL, sent, token, {}, (), derived)
    assert found, "no view reproduced the token"
    view, derivation = found[0]
    assert view.derived == "the file's sha256"
    assert f"'{joiner}'-joined values (in argument order)" in derivation.name
    # Without the derived value the view cannot be made: nothing is forged from a guess.
    assert view.of(sent, {}, (), {}) is None
