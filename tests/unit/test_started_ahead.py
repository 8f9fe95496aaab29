"""The processes the selected attacks will need start ahead, beside the primary: replicas and the short-lived one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from mcp_confirm_audit.catalogue.loader import Catalogue, load_catalogue
from mcp_confirm_audit.engine.connection_key import ConnectionKey
from mcp_confirm_audit.engine.session import AuditSession
from mcp_confirm_audit.profile.loader import Profile

COMMAND = "python server.py --root {root}"


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue()


def started_ahead(
    monkeypatch: pytest.MonkeyPatch, catalogue: Catalogue, profile: Profile, families: Iterable[str]
) -> dict[str, Any]:
    session = AuditSession(profile, catalogue)
    seen: dict[str, Any] = {}

    def start_ahead(
        keys: Iterable[ConnectionKey],
        *,
        unnumbered: Iterable[str] = (),
        profiles: Mapping[str, Profile] | None = None,
    ) -> None:
        seen.update(
            keys=[key.name for key in keys], unnumbered=set(unnumbered), profiles=dict(profiles or {})
        )

    monkeypatch.setattr(session.world, "start_ahead", start_ahead)
    session.prepare([spec for spec in catalogue.active if spec.family in set(families)])
    return seen


def test_the_other_replicas_and_the_short_lived_process_start_ahead_unnumbered(
    monkeypatch: pytest.MonkeyPatch, catalogue: Catalogue
) -> None:
    profile = Profile(command=COMMAND, replicas=3, ttl_flag="--ttl-seconds {ttl}", ttl=1)
    seen = started_ahead(monkeypatch, catalogue, profile, ["cross-replica", "expiry"])
    assert seen["keys"] == ["replica-1", "replica-2", "short-lived"]
    assert seen["unnumbered"] == {"replica-1", "replica-2", "short-lived"}
    # The short-lived one with its lifetime shortened, as when an attack opened it.
    assert seen["profiles"]["short-lived"].command == f"{COMMAND} --ttl-seconds 1"


def test_nothing_starts_ahead_that_no_selected_attack_needs(
    monkeypatch: pytest.MonkeyPatch, catalogue: Catalogue
) -> None:
    profile = Profile(command=COMMAND, replicas=2, ttl_flag="--ttl-seconds {ttl}", ttl=1)
    assert started_ahead(monkeypatch, catalogue, profile, ["consent"])["keys"] == []
    # Without a ttl_flag no short-lived process can be had; without replicas, none of them.
    assert (
        started_ahead(monkeypatch, catalogue, Profile(command=COMMAND), ["cross-replica", "expiry"])["keys"]
        == []
    )
