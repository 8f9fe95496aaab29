"""ungated reaches a collection's links by their ids, both ways, on the collections reference server.

As on linkwarden-mcp 0.1.6: `delete_collection` asks the person, while `delete_links(link_ids)`
deletes the collection's links asking nobody. The harness used to hand it an empty list, so
nothing happened and the bypass was missed. The ids now come from what `list_links` shows of
the victim's collection where the gated effect showed. A careful server's `delete_links`
refuses a collection's links (they go with the collection, which asks): its call ran, with
those ids, and nothing of the gated kind moved.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

COLLECTIONS = Path(__file__).resolve().parents[2] / "targets" / "collections" / "server.py"
UNGATED = "MCA-UNGATED-001"
TWO_LINKS = re.compile(r'"link_ids": \["l\d+", "l\d+"\]')


def ungated(catalogue: Catalogue, *, flaws: tuple[str, ...] = (), **settings: Any) -> Result:
    # As targets/collections-drift.yaml makes a use of the action: a collection of two links, one loose link.
    raw = {
        "command": f"py:{COLLECTIONS}:build_server",
        "factory_args": {"flaws": list(flaws), "by_id": settings.pop("by_id", "none")},
        "tool": "delete_collection",
        "setup": [
            {"tool": "create_collection", "args": {"title": "reading"}, "save": {"c": "collection_id"}},
            {"tool": "add_link", "args": {"url": "https://example.org/later"}, "save": {"loose": "link_id"}},
        ],
        "args": {"collection_id": "{c}"},
        "effect": [{"tool": "list_links"}],
        "call_timeout": 10.0,
        **settings,
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family == "ungated",
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls if c.name == "approve"), run.controls
    return run.by_id()[UNGATED]


def sent_to(result: Result, tool: str) -> list[str]:
    return [line for line in result.evidence if f"-> {tool}(" in line]


@pytest.mark.parametrize("settings", [{}, {"protocol": "2025-11-25"}], ids=["mrtr", "elicitation"])
def test_a_tool_that_deletes_the_collections_links_by_id_unasked_is_the_gated_harm(
    catalogue: Catalogue, settings: dict[str, Any]
) -> None:
    result = ungated(catalogue, flaws=("deletes-links-unasked",), **settings)
    assert result.verdict is Verdict.VULNERABLE, (result.reason, result.evidence)
    assert "delete_links acted with no confirmation" in result.reason, result.reason
    assert "with the gated action's own effect: removed tool:list_links.links[*]" in result.reason
    # The victim collection's two links, by the ids list_links shows: never an empty list.
    (call,) = sent_to(result, "delete_links")
    assert TWO_LINKS.search(call), call


@pytest.mark.parametrize("settings", [{}, {"protocol": "2025-11-25"}], ids=["mrtr", "elicitation"])
def test_a_careful_tool_that_refuses_a_collections_links_by_id_is_the_gate_holding(
    catalogue: Catalogue, settings: dict[str, Any]
) -> None:
    result = ungated(catalogue, by_id="refuses-members", **settings)
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (result.reason, result.evidence)
    (call,) = sent_to(result, "delete_links")
    assert TWO_LINKS.search(call), call
    assert "belong to a collection" in call, call
    # What moved is the staging a use of the action needs (a collection made), never a link removed.
    assert "nothing of the gated action's own kind moved" in result.reason, result.reason
    # What held is quoted from the tool that was tried, not from the staging that followed it.
    assert "belong to a collection" in result.reason, result.reason
    assert not any(".links[" in p and "removed" in p for p in result.evidence), result.evidence


def by_text(catalogue: Catalogue, *flaws: str) -> Result:
    # list_links in text, one line a link; the setup makes a collection only, so add_link is another tool.
    raw = {
        "command": f"py:{COLLECTIONS}:build_server",
        "factory_args": {"flaws": list(flaws), "listing": "text"},
        "tool": "delete_collection",
        "setup": [
            {"tool": "create_collection", "args": {"title": "reading"}, "save": {"c": "collection_id"}}
        ],
        "args": {"collection_id": "{c}"},
        "effect": [{"tool": "list_links"}],
        "call_timeout": 10.0,
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family == "ungated",
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls if c.name == "approve"), run.controls
    return run.by_id()[UNGATED]


def test_a_link_saved_where_a_text_listing_shows_the_deletion_is_not_the_deletion(
    catalogue: Catalogue,
) -> None:
    # Read whole, the listing "changed" for add_link's new line as for the deletion's removed ones, and
    # the link saved was called the collection's deletion done around the gate (vulnerable).
    result = by_text(catalogue)
    assert result.verdict is not Verdict.VULNERABLE, (result.reason, result.evidence)
    assert (result.verdict, result.layer) == (Verdict.WEAK, Layer.NONE), (result.reason, result.evidence)
    assert "add_link acted with no confirmation" in result.reason, result.reason
    assert "where the gated action's effect shows: added tool:list_links.result[*]" in result.reason


def test_rows_removed_from_a_text_listing_around_the_gate_are_the_gated_harm(catalogue: Catalogue) -> None:
    result = by_text(catalogue, "prunes-unasked")
    assert result.verdict is Verdict.VULNERABLE, (result.reason, result.evidence)
    assert "prune_links acted with no confirmation" in result.reason, result.reason
    assert "with the gated action's own effect: removed tool:list_links.result[*]" in result.reason
