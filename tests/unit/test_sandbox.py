"""The effect oracle reads the real filesystem: identity, links, the tree before and after."""

from __future__ import annotations

import os
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_confirm_audit.oracle import sandbox as sandbox_module
from mcp_confirm_audit.oracle.sandbox import Sandbox, diff


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox()
    yield box
    box.remove()


def test_a_case_has_a_victim_and_canaries_inside_outside_and_in_the_prefix_sibling(sandbox: Sandbox) -> None:
    case = sandbox.new_case("x")
    assert case.victim.parent == sandbox.root / case.name
    assert case.outside_canary.is_relative_to(sandbox.outside)
    assert case.sibling_canary.is_relative_to(sandbox.sibling)
    assert str(sandbox.sibling).startswith(str(sandbox.root))


def test_an_unlink_is_a_removal(sandbox: Sandbox) -> None:
    case = sandbox.new_case("x")
    before = sandbox.snapshot()
    case.victim.unlink()
    assert diff(before, sandbox.snapshot()).removed == (case.rel(case.victim),)


def test_a_rename_onto_the_victim_is_a_change_even_with_the_same_size(sandbox: Sandbox) -> None:
    case = sandbox.new_case("x")
    impostor = case.add_file("impostor.txt", case.victim.read_text())
    before = sandbox.snapshot()
    os.replace(impostor, case.victim)
    effect = diff(before, sandbox.snapshot())
    assert case.rel(case.victim) in effect.changed


def test_a_link_swapped_in_is_seen_as_a_link_not_as_its_destination(sandbox: Sandbox) -> None:
    case = sandbox.new_case("x")
    before = sandbox.snapshot()
    case.victim.unlink()
    case.victim.symlink_to(case.outside_canary)
    after = sandbox.snapshot()
    assert after.entries[case.rel(case.victim)].kind == "link"
    assert case.rel(case.victim) in diff(before, after).changed


def test_removing_the_sandbox_does_not_follow_links_out_of_it(
    sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "keep.txt"
    elsewhere.write_text("must survive")
    (sandbox.root / "link").symlink_to(elsewhere.parent)
    sandbox.remove()
    assert elsewhere.read_text() == "must survive"
    assert not sandbox.base.exists()


def test_a_served_root_gets_a_folder_of_cases_and_only_it_is_watched_and_removed(tmp_path: Path) -> None:
    theirs = tmp_path / "served"
    theirs.mkdir()
    (theirs / "their-file.txt").write_text("not ours")
    box = Sandbox(served_root=theirs)
    case = box.new_case("x")
    assert case.victim.is_relative_to(theirs)
    assert case.directory.parent.parent.parent == theirs  # in a folder of the harness's own
    assert case.victim.stat().st_dev == box.keep.stat().st_dev  # a hard link can keep it alive
    assert case.rel(case.victim).startswith("root/")
    assert not box.sibling_shares_prefix
    assert "root/their-file.txt" not in box.snapshot().entries
    before = box.snapshot()
    case.victim.unlink()
    assert diff(before, box.snapshot()).removed == (case.rel(case.victim),)
    box.remove()
    assert sorted(p.name for p in theirs.iterdir()) == ["their-file.txt"]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | st.text(alphabet=string.printable, max_size=60))
def test_a_case_slug_is_every_non_alphanumeric_character_made_a_dash(label: str) -> None:
    cleaned = "".join(ch if ch.isalnum() else "-" for ch in label.lower()).strip("-")
    assert sandbox_module._slug(label) == (cleaned[:40] or "case")


def test_a_case_makes_its_canaries_beside_the_root_only_when_they_are_named(sandbox: Sandbox) -> None:
    case = sandbox.new_case("x")
    assert (sandbox.root / case.name / "canary.txt").is_file()
    assert not (sandbox.outside / case.name).exists()
    assert not (sandbox.sibling / case.name).exists()
    assert case.outside_canary.read_text() == sandbox_module.CANARY_TEXT
    assert case.sibling_canary.read_text() == sandbox_module.CANARY_TEXT
    assert case.outside_canary == sandbox.outside / case.name / "canary.txt"


def test_a_named_canary_beside_the_root_is_in_the_next_snapshot_and_looked_at_without_an_event(
    sandbox: Sandbox,
) -> None:
    sandbox.snapshot()
    case = sandbox.new_case("x")
    sandbox.snapshot()
    canary = case.outside_canary  # named after the case's own folder was snapshot: made now
    os.link(canary, sandbox.keep / "kept-elsewhere")
    before = sandbox.snapshot()
    assert case.rel(canary) in before.entries
    # A write through a hard link outside the tree raises no event in it: only the pin finds it.
    with (sandbox.keep / "kept-elsewhere").open("a") as handle:
        handle.write("rewritten")
    assert diff(before, sandbox.snapshot()).changed == (case.rel(canary),)
    sibling = case.sibling_canary
    before = sandbox.snapshot()
    sibling.unlink()
    assert diff(before, sandbox.snapshot()).removed == (case.rel(sibling),)
