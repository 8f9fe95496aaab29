"""MkDocs hook: a page added to a section's folder joins that section's nav without a mkdocs.yml edit.

`nav:` in mkdocs.yml fixes the order of the pages it lists; any other Markdown page in the folder of a
section's listed pages (docs/how-to/, docs/explanation/...) is appended to that section, sorted by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _listed(entry: Any) -> list[str]:
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, dict):
        return [page for value in entry.values() for page in _listed(value)]
    if isinstance(entry, list):
        return [page for item in entry for page in _listed(item)]
    return []


def on_config(config: Any) -> Any:
    docs = Path(config["docs_dir"])
    nav = config["nav"] or []
    everywhere = set(_listed(nav))
    for section in nav:
        if not isinstance(section, dict):
            continue
        for pages in section.values():
            if not isinstance(pages, list):
                continue
            folders = {str(Path(page).parent) for page in _listed(pages) if "/" in page}
            for folder in sorted(folders):
                for path in sorted((docs / folder).glob("*.md")):
                    page = path.relative_to(docs).as_posix()
                    if page not in everywhere:
                        pages.append(page)
                        everywhere.add(page)
    return config
