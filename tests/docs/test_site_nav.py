"""The docs site's nav: a page another change drops in a section's folder is built and listed."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import yaml
from markdown_blocks import REPO


def _hook() -> Any:
    spec = importlib.util.spec_from_file_location("nav_hook", REPO / "docs" / "nav_hook.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _nav() -> list[Any]:
    # mkdocs.yml holds no YAML tags, so the safe loader reads it as MkDocs does.
    nav: list[Any] = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    return nav


def test_a_page_in_a_sections_folder_joins_that_section_after_the_listed_ones(tmp_path: Path) -> None:
    (tmp_path / "how-to").mkdir()
    for name in ("listed.md", "zz-new.md", "aa-new.md"):
        (tmp_path / "how-to" / name).write_text(f"# {name}\n")
    (tmp_path / "loose.md").write_text("# loose\n")
    config = {
        "docs_dir": str(tmp_path),
        "nav": [{"Home": "loose.md"}, {"How-to guides": ["how-to/listed.md"]}],
    }
    _hook().on_config(config)
    assert config["nav"][1] == {"How-to guides": ["how-to/listed.md", "how-to/aa-new.md", "how-to/zz-new.md"]}
    assert config["nav"][0] == {"Home": "loose.md"}


def test_every_page_of_a_section_folder_is_in_the_nav_and_the_nav_names_only_pages() -> None:
    config = {"docs_dir": str(REPO / "docs"), "nav": _nav()}
    hook = _hook()
    hook.on_config(config)
    listed = set(hook._listed(config["nav"]))
    pages = {p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md")}
    for section in ("tutorial", "how-to", "reference", "explanation"):
        assert {p for p in pages if p.startswith(f"{section}/")} <= listed
    assert listed - pages == set(), "the nav names a page that does not exist"
