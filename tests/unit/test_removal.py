"""Removing a sandbox removes everything below it and nothing a link points to, even a link swapped in late."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_confirm_audit.oracle import removal
from mcp_confirm_audit.oracle.removal import remove_tree


def _elsewhere(tmp_path: Path) -> Path:
    outside = tmp_path / "elsewhere"
    (outside / "inner").mkdir(parents=True)
    (outside / "keep.txt").write_text("must survive")
    (outside / "inner" / "keep.txt").write_text("must survive")
    return outside


def _survived(outside: Path) -> bool:
    return sorted(str(p.relative_to(outside)) for p in outside.rglob("*")) == [
        "inner",
        "inner/keep.txt",
        "keep.txt",
    ]


def test_every_kind_of_entry_goes_and_what_links_point_to_stays(tmp_path: Path) -> None:
    outside = _elsewhere(tmp_path)
    tree = tmp_path / "tree"
    (tree / "a" / "b" / "c").mkdir(parents=True)
    (tree / "a" / "file.txt").write_text("x")
    (tree / "a" / "b" / "c" / "deep.txt").write_text("x")
    (tree / "empty").mkdir()
    (tree / "to-dir").symlink_to(outside)
    (tree / "a" / "to-file").symlink_to(outside / "keep.txt")
    (tree / "a" / "b" / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tree / "fifo")
    os.link(outside / "keep.txt", tree / "hard-link")
    remove_tree(tree)
    assert not os.path.lexists(tree)
    assert _survived(outside)


def test_a_deep_tree_goes_whole(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    fd = os.open(tree, os.O_RDONLY)
    for _ in range(300):  # deeper than a path may be spelt: made level by level
        os.mkdir("d", dir_fd=fd)
        child = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.close(fd)
    remove_tree(tree)
    assert not os.path.lexists(tree)


def test_the_top_itself_as_a_link_or_a_file_is_left_alone(tmp_path: Path) -> None:
    outside = _elsewhere(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(outside)
    remove_tree(link)
    assert link.is_symlink()
    assert _survived(outside)
    remove_tree(outside / "keep.txt")
    remove_tree(tmp_path / "missing")
    assert _survived(outside)


def test_a_directory_swapped_for_a_link_after_the_listing_is_unlinked_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = _elsewhere(tmp_path)
    tree = tmp_path / "tree"
    (tree / "victim").mkdir(parents=True)
    (tree / "victim" / "f.txt").write_text("x")
    listed = removal._entries

    def then_swapped(fd: int) -> Iterator[tuple[str, bool]]:
        entries = listed(fd)
        if (tree / "victim").is_dir() and not (tree / "victim").is_symlink():
            # What a hostile target does between the listing and the open.
            shutil.rmtree(tree / "victim")
            (tree / "victim").symlink_to(outside)
        return entries

    monkeypatch.setattr(removal, "_entries", then_swapped)
    remove_tree(tree)
    assert not os.path.lexists(tree)
    assert _survived(outside)
