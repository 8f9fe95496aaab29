"""An error reply that says the call is pending and names its id is advised as a pending flow (trial 15).

actgate 0.3.0 answers every first call `ACTGATE_PENDING intent_id=<hex>` in an isError result: the call
was staged under that id, and the person approves it on actgate's CLI. Zero configuration said "the target
refused the harness's arguments: set path_arg", which sends a newcomer to the wrong key. An error that
names no pending id keeps that advice.
"""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from mcp_confirm_audit.engine.controls import _did_not_ask
from mcp_confirm_audit.models import Outcome, Response

_NO_PROFILE: Any = SimpleNamespace(plan=SimpleNamespace(setup=(), template=None))


def test_a_pending_id_in_an_error_reply_is_advised_as_a_pending_flow_with_its_id_pattern() -> None:
    reply = Response(Outcome.TOOL_ERROR, text="ACTGATE_PENDING intent_id=64f6a30c8c4e46cd98761ce3db16b761")
    advice = _did_not_ask(reply, _NO_PROFILE, "relative")
    assert "pending under intent_id 64f6a30c8c4e46cd98761ce3db16b761" in advice, advice
    assert "refused the harness's arguments" not in advice
    assert "path_arg" not in advice
    pattern = re.search(r"id_pattern: '([^']+)'", advice)
    assert pattern is not None, advice
    # The pattern it writes takes the id back out of the very reply it came from.
    assert re.search(pattern.group(1), reply.text).group(1) == "64f6a30c8c4e46cd98761ce3db16b761"  # type: ignore[union-attr]


def test_an_error_that_names_no_pending_id_still_says_the_arguments_were_refused() -> None:
    for text in (
        "Error executing tool delete_file: [Errno 2] No such file or directory: 'x.txt'",
        # An id, but nothing pending: a lookup that failed is the arguments' fault.
        "unknown change_id: mcp-confirm-audit",
        # Pending, but no id to approve it by.
        "the request is pending review",
    ):
        advice = _did_not_ask(Response(Outcome.TOOL_ERROR, text=text), _NO_PROFILE, "relative")
        assert "the target refused the harness's arguments: set path_arg" in advice, advice
        assert "id_pattern" not in advice


def test_a_service_the_target_cannot_reach_is_no_refusal_of_the_arguments() -> None:
    """mcp-proton-email with no mail bridge running: every call failed "[Errno 111] Connection refused".

    Advised to "set path_arg", a newcomer changes arguments that were never the trouble.
    """
    for text in (
        "Error executing tool list_folders: [Errno 111] Connection refused",
        "Error executing tool send: could not connect to smtp 127.0.0.1:1025",
        "upstream error: [Errno -2] Name or service not known",
    ):
        advice = _did_not_ask(Response(Outcome.TOOL_ERROR, text=text), _NO_PROFILE, "relative")
        assert "could not reach a service it depends on" in advice, advice
        assert "refused the harness's arguments" not in advice
        assert "path_arg" not in advice
