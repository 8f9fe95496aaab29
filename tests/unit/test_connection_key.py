"""A connection is opened by a typed key; its name, what evidence and logs show, is as it always was."""

from __future__ import annotations

import pytest

from mcp_confirm_audit.engine.connection_key import PRIMARY, ConnectionKey
from mcp_confirm_audit.engine.world import _declared, era_of

ABLATED_LEGACY = ConnectionKey(ablated=True, era="legacy")


@pytest.mark.parametrize(
    ("key", "name"),
    [
        (PRIMARY, "primary"),
        (ConnectionKey().at("replica-1"), "replica-1"),
        (ABLATED_LEGACY, "ablated-legacy-"),
        (ABLATED_LEGACY.at("primary"), "ablated-legacy-primary"),
        # Over HTTP another client declares it; over stdio a process of its own.
        (ABLATED_LEGACY.at("client", declares="url"), "ablated-legacy-client-declares-url"),
        (ConnectionKey().at("", declares="none"), "declares-none"),
        # The other era keeps the ablation and replaces the era.
        (ABLATED_LEGACY.in_era("modern").at("client"), "ablated-modern-client"),
        (
            ConnectionKey().at("principal-mallory-claiming-the-victim"),
            "principal-mallory-claiming-the-victim",
        ),
    ],
)
def test_each_key_is_named_as_evidence_shows_it(key: ConnectionKey, name: str) -> None:
    assert key.name == str(key) == name


def test_what_a_connection_opens_with_is_read_from_its_key_not_its_name() -> None:
    # A principal whose name holds "legacy-" is no legacy connection: nothing parses the name.
    mallory = ConnectionKey().at("principal-legacy-declares-url")
    assert (era_of(mallory, "auto"), _declared(mallory)) == (None, "form+url")
    declaring = ABLATED_LEGACY.at("client", declares="none")
    assert era_of(declaring, "auto") is not None
    assert _declared(declaring) == "none"
    assert era_of(PRIMARY.in_era("modern"), "2025-11-25") == "auto"
